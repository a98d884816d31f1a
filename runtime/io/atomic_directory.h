#pragma once
// Writes a directory so that readers see either the old one or the complete new one, never a
// part: the files go to a temporary directory beside the target ("DIR.tmp-HOST-PID-XXXXXX"),
// which commit() fsyncs and swaps into place (renameat2 RENAME_EXCHANGE when DIR exists, then the
// old contents are removed; a plain rename otherwise). Without commit() (an error, an exception) the temporary
// directory is removed. A symlinked DIR is written through to the link's target (the link stays);
// a DIR that exists and is not a directory is refused (io/output_path.h). I/O failures throw
// InputError naming DIR. A writer killed before it cleaned up leaves its temporary directory;
// the next writer of DIR on the same host removes those whose process is gone.
#include <string>

namespace specd {

class AtomicDirectoryWriter {
 public:
  // Creates the parent directories of DIR when missing, then the temporary directory.
  explicit AtomicDirectoryWriter(const std::string& dir);
  ~AtomicDirectoryWriter();
  AtomicDirectoryWriter(const AtomicDirectoryWriter&) = delete;
  AtomicDirectoryWriter& operator=(const AtomicDirectoryWriter&) = delete;

  const std::string& temp_dir() const { return temp_dir_; }
  std::string file(const std::string& name) const { return temp_dir_ + "/" + name; }

  // fsyncs every file of the temporary directory and the directory itself, swaps it into place,
  // removes the old contents and fsyncs the parent.
  void commit();

 private:
  std::string where_;  // DIR as given, for messages
  std::string dir_;    // DIR with symlinks followed: what commit() replaces
  std::string temp_dir_;
  bool committed_ = false;
};

}  // namespace specd
