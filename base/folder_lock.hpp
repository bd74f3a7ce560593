// One writer per output folder. A run, a table or a chapter's experiment holds an advisory lock
// (flock) on `<folder>/.lock` while it writes there, so that a second program started on the
// same folder is refused at once, naming the holder's process id, instead of the two replacing
// each other's files. The kernel releases the lock when its process ends, however it ends: a
// killed run never leaves a stale lock behind.
#pragma once
#include <string>

namespace pe {

/// An advisory lock on `<folder>/.lock`, held while a program writes into the folder.
class FolderLock {
 public:
  /// Creates `folder` (and its parents) if it is missing, then locks it. Throws ag::Error,
  /// prefixed by `op` (unless empty):
  ///   run: the output folder 'results/x' is being written by another process (pid 1234); ...
  /// when another process (or another part of this one) holds it, and "cannot write into the
  /// output folder" when the lock file cannot be made (a read-only folder). The lock file is
  /// created exclusively and is the only file it writes; a `.lock` that is a symbolic link, a
  /// pipe, a device, a folder or a hard link is refused by name, never followed or truncated
  /// (anyone who can write into a shared folder could have planted it), and a regular one left
  /// by a killed program is removed and made anew.
  FolderLock(const std::string& folder, const std::string& op);
  ~FolderLock();  ///< release()
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  /// Removes the lock file, then releases the lock. A program that opened the file just
  /// before it was removed finds, once it gets the lock, that the file it holds is no longer
  /// the one in the folder, and starts over.
  void release();
  /// For a program that fails: release(), then remove the folder if this lock made it and
  /// nothing is in it, so that a refused command leaves nothing behind.
  void abandon();

 private:
  std::string folder_;
  std::string path_;  // <folder>/.lock
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace pe
