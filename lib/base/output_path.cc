// The checks of an output path; see output_path.h.
#include "output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace plumber {

Status CheckOutputPath(const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty()) return Status::InvalidArgument("the output path is empty");
  std::string dir = std::filesystem::path(output).parent_path().string();
  if (dir.empty()) dir = ".";
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) {
    return Status::InvalidArgument(output + ": the directory " + dir + " does not exist");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::InvalidArgument(output + ": cannot write in the directory " + dir + ": " + std::strerror(errno));
  }
  struct stat os {};
  if (::stat(output.c_str(), &os) != 0) return Status::OK();  // a new file
  if (S_ISDIR(os.st_mode)) return Status::InvalidArgument(output + ": is a directory, not a file to write");
  for (const auto& in : inputs) {
    struct stat is {};
    if (::stat(in.c_str(), &is) == 0 && is.st_dev == os.st_dev && is.st_ino == os.st_ino) {
      return Status::InvalidArgument(output + ": is the input " + in + "; write the output to another file");
    }
  }
  // The rename of an atomic write would replace a read-only file (and give
  // it the default mode): someone made it read-only to keep it.
  if (::access(output.c_str(), W_OK) != 0) {
    return Status::InvalidArgument(output + ": is read-only; plumber does not replace it (make it writable or "
                                   "write elsewhere)");
  }
  return Status::OK();
}

}  // namespace plumber
