#pragma once
// Where an output really goes, checked before anything is written. An output is replaced by
// rename (io/atomic_file.h, io/atomic_directory.h), which would turn a symlink into a plain file
// and replace a FIFO or a device node: so a symlink is followed to its target (the new file is
// renamed onto the target, the link stays), and anything that is not a regular file (or, for
// a directory output, not a directory) is refused. InputError naming `where` on any problem.
#include <string>
#include <vector>

namespace specd {

// PATH, or the end of the symlink chain starting at PATH (which need not exist yet). Refuses
// an existing PATH that is not a regular file: a directory, FIFO, socket or device.
std::string resolve_output_file(const std::string& path, const std::string& where);
// The same for an output directory: refuses an existing PATH that is not a directory.
std::string resolve_output_directory(const std::string& path, const std::string& where);

// Checks, without creating anything, that an output can be written: the nearest existing
// ancestor of its resolved path is a writable directory. Returns the resolved path.
std::string check_output_file_writable(const std::string& path, const std::string& where);
std::string check_output_directory_writable(const std::string& path, const std::string& where);

// An output directory a command is about to replace whole: refused (InputError naming `where`)
// when it is a symlink (replacing it would empty the link's target), or when it exists and holds
// anything but the files the command writes (`own`, e.g. report.html and report.md), unless
// `force`. `what` names the command's output in the message ("a report"). Absent or empty: fine.
void check_replaceable_directory(const std::string& path, const std::vector<std::string>& own, bool force, const std::string& what,
                                 const std::string& where);

// A key that is equal for two spellings of one output (relative or absolute, through symlinks,
// hard links of an existing file): for refusing two outputs that name the same file.
std::string output_identity(const std::string& resolved_path);

// `path` as written into something another machine reads (a report, a provenance table): an
// absolute path relative to the working directory, so that no machine's layout is recorded;
// anything else as given.
std::string portable_path(const std::string& path);

}  // namespace specd
