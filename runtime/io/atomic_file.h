#pragma once
// Writes a file so that readers see either the old file or the complete new one, never a part:
// the bytes go to a temporary file beside the target, which is renamed over the target only on
// commit(). Without commit() (an error, an exception) the temporary is removed. The temporary is
// unnamed (O_TMPFILE) until commit() links it as "PATH.tmp-XXXXXX" just before the rename, so a
// process killed while writing (SIGKILL, where nothing can clean up) leaves nothing behind; on a
// file system without O_TMPFILE it is named from the start.
// A symlinked target is written through: the temporary goes beside the link's target and is
// renamed onto it, so the link stays. A target that exists and is not a regular file (a FIFO, a
// device, a directory) is refused before anything is written (io/output_path.h).
// I/O failures throw InputError naming the target path.
#include <cstddef>
#include <string>

namespace specd {

class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t size);
  void write(const std::string& bytes) { write(bytes.data(), bytes.size()); }
  // Flushes to disk and renames the temporary over the target.
  void commit();

 private:
  void discard() noexcept;

  std::string path_;      // as given, for messages
  std::string target_;    // path_ with symlinks followed: what commit() replaces
  std::string temp_path_;  // empty while the temporary is unnamed
  int fd_ = -1;
  bool committed_ = false;
};

void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace specd
