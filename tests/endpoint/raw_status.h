#pragma once
// Raw bytes over loopback TCP: a client library may refuse to send what the bad-input tests
// need (control characters, invalid UTF-8, megabyte headers, odd methods).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace idem::test {

/// Sends `request` and reads the first response; returns its status (0: no HTTP answer,
/// -1: no connection). The whole response, head and body, goes to *response when given.
inline int rawStatus(int port, const std::string& request, std::string* response = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[4096];
  // Until the head and Content-Length bytes of body are in (the server may keep the socket open).
  auto complete = [&in] {
    const auto end = in.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    const auto cl = in.find("Content-Length: ");
    if (cl == std::string::npos || cl > end) return true;
    return in.size() >= end + 4 + std::stoul(in.substr(cl + 16));
  };
  while (!complete()) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (response) *response = in;
  if (in.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::stoi(in.substr(9, 3));
}

/// The body of a raw response (after the blank line).
inline std::string rawBody(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

}  // namespace idem::test
