#pragma once
// One HTTP/1.1 exchange over a plain socket, for requests a client library would refuse or
// rewrite: path spellings sent byte for byte, duplicate headers, bytes outside ASCII.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "core/http/headers.h"

namespace idem::test {

struct RawResponse {
  int status = 0;  // 0: no HTTP answer
  std::string head;
  std::string body;
  /// The first header of that name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const {
    std::size_t at = head.find("\r\n");
    while (at != std::string::npos && at + 2 < head.size()) {
      const std::size_t end = head.find("\r\n", at + 2);
      const std::string line = head.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
      const auto colon = line.find(':');
      if (colon != std::string::npos && http::equalsIgnoreCase(line.substr(0, colon), name)) {
        auto v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        return v;
      }
      at = end;
    }
    return {};
  }
};

/// Sends `method target` with the header lines given (each "Name: value") and the body, with
/// Connection: close, and reads the whole answer.
inline RawResponse rawExchange(int port, const std::string& method, const std::string& target,
                               const std::vector<std::string>& headerLines, const std::string& body = {}) {
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& l : headerLines) request += l + "\r\n";
  if (!body.empty() || method == "POST") request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  RawResponse out;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return out;
  }
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const auto end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return out;
  out.status = std::stoi(in.substr(9, 3));
  out.head = in.substr(0, end);
  out.body = in.substr(end + 4);
  return out;
}

}  // namespace idem::test
