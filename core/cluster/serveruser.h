#pragma once
// Who runs a local cluster's server, and what that user can reach: the folder permission
// checks of LocalCluster, kept apart from starting and stopping it.
#include <sys/types.h>

#include <string>
#include <vector>

namespace idem::cluster {

struct ServerUser {
  std::string name;           // the OS user the server runs as
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // every group it is in, the primary one included
  std::string clientName;     // the OS user of this process, who connects as the superuser
};

/// We are root: the `postgres` system user (initdb refuses root); else ourselves.
ServerUser serverUser();

/// The first folder on the way into `path` (its ancestors, then `path` itself) the user
/// cannot search (enter), or "" when it can. From the mode bits, as the kernel checks them.
std::string firstUnreachable(const std::string& path, const ServerUser& user);

/// Writes `text` to `path` readable by the server user alone (0600, owned by it).
void writePrivateFile(const std::string& path, const std::string& text, const ServerUser& user);

/// Makes `path` (a folder of the cluster's own) the server user's alone: owner, mode 0700.
void makePrivateFolder(const std::string& path, const ServerUser& user);

}  // namespace idem::cluster
