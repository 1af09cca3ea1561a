#include "core/cluster/serveruser.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace idem::cluster {

ServerUser serverUser() {
  ServerUser u;
  const passwd* self = getpwuid(geteuid());
  u.clientName = self ? self->pw_name : std::to_string(geteuid());
  const passwd* pw = geteuid() == 0 ? getpwnam("postgres") : self;
  if (!pw) {
    if (geteuid() == 0)
      throw std::runtime_error("running as root needs the 'postgres' system user (apt install postgresql)");
    throw std::runtime_error("cannot look up the user this process runs as");
  }
  u.name = pw->pw_name;
  u.uid = pw->pw_uid;
  u.gid = pw->pw_gid;
  int n = 32;
  u.groups.resize(static_cast<std::size_t>(n));
  if (getgrouplist(pw->pw_name, pw->pw_gid, u.groups.data(), &n) < 0) {
    u.groups.resize(static_cast<std::size_t>(n));
    getgrouplist(pw->pw_name, pw->pw_gid, u.groups.data(), &n);
  }
  u.groups.resize(static_cast<std::size_t>(std::max(n, 0)));
  return u;
}

std::string firstUnreachable(const std::string& path, const ServerUser& user) {
  if (user.uid == 0) return {};
  fs::path walked;
  for (const auto& part : fs::path(path)) {
    walked /= part;
    struct stat st {};
    if (stat(walked.c_str(), &st) != 0) return {};  // created later, by us, for the server user
    const bool inGroup = std::find(user.groups.begin(), user.groups.end(), st.st_gid) != user.groups.end();
    const mode_t bit = st.st_uid == user.uid ? S_IXUSR : inGroup ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & bit) == 0) return walked.string();
  }
  return {};
}

void writePrivateFile(const std::string& path, const std::string& text, const ServerUser& user) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  if (chmod(path.c_str(), 0600) != 0) throw std::runtime_error("cannot chmod " + path);
  if (geteuid() == 0 && chown(path.c_str(), user.uid, user.gid) != 0)
    throw std::runtime_error("cannot hand " + path + " to the " + user.name + " user");
}

void makePrivateFolder(const std::string& path, const ServerUser& user) {
  fs::create_directories(path);
  if (geteuid() == 0 && chown(path.c_str(), user.uid, user.gid) != 0)
    throw std::runtime_error("cannot hand " + path + " to the " + user.name + " user");
  if (chmod(path.c_str(), 0700) != 0) throw std::runtime_error("cannot chmod " + path);
}

}  // namespace idem::cluster
