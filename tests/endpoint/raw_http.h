#pragma once
// Raw HTTP over a loopback socket, for the suites that must send what no client library would:
// bad framing, invalid bytes, a header block dripped byte by byte, connections left idle.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <string>

namespace idem::test {

class RawConnection {
 public:
  /// from: the local address to connect from ("127.0.0.2": another client on loopback).
  explicit RawConnection(int port, const char* from = nullptr) {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (from) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      inet_pton(AF_INET, from, &local.sin_addr);
      if (::bind(m_fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
        ::close(m_fd);
        m_fd = -1;
        return;
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(m_fd);
      m_fd = -1;
    }
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection() {
    if (m_fd >= 0) ::close(m_fd);
  }

  [[nodiscard]] bool connected() const { return m_fd >= 0; }

  /// false once the peer refuses more bytes (closed or reset).
  bool send(const std::string& bytes) {
    std::size_t sent = 0;
    while (m_fd >= 0 && sent < bytes.size()) {
      const ssize_t n = ::send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return m_fd >= 0;
  }

  /// Reads one response (head plus Content-Length bytes of body) within `timeout`; "" when
  /// nothing complete arrived. Bytes past that response stay for the next call.
  std::string response(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (const auto n = completeLength(); n > 0) {
        std::string one = m_in.substr(0, n);
        m_in.erase(0, n);
        return one;
      }
      if (!readSome(deadline)) return {};
    }
  }

  /// Waits until the server closes the connection (EOF or reset), discarding what it sends.
  /// Returns the time it took, or `timeout` when it stayed open.
  std::chrono::milliseconds closedWithin(std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + timeout;
    while (readSome(deadline)) {
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    return m_eof ? took : timeout;
  }

  [[nodiscard]] bool eof() const { return m_eof; }

 private:
  // Appends what arrives before the deadline; false at EOF, reset or timeout.
  bool readSome(std::chrono::steady_clock::time_point deadline) {
    if (m_fd < 0 || m_eof) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char buf[16384];
    const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
    if (n <= 0) {
      m_eof = true;
      return false;
    }
    m_in.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  std::size_t completeLength() const {
    const auto end = m_in.find("\r\n\r\n");
    if (end == std::string::npos) return 0;
    std::size_t length = 0;
    for (std::size_t at = 0; at < end;) {
      const auto eol = m_in.find("\r\n", at);
      const std::string line = m_in.substr(at, eol - at);
      if (line.size() > 15 && strncasecmp(line.c_str(), "Content-Length:", 15) == 0)
        length = std::stoul(line.substr(15));
      at = eol + 2;
    }
    return m_in.size() >= end + 4 + length ? end + 4 + length : 0;
  }

  int m_fd = -1;
  bool m_eof = false;
  std::string m_in;
};

/// The status code of a raw response ("HTTP/1.1 404 ..."), 0 when there is none.
inline int statusOf(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

/// The body of a raw response ("" when its head never ended).
inline std::string bodyOf(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

/// GET /healthz on a connection that closes after it.
inline const std::string kHealthRequest = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/// A chunked request: `head` holds the request line and header fields (no framing), then the
/// body in one chunk, then `trailers` (each "Name: value\r\n") after the last chunk.
inline std::string chunkedWithTrailers(const std::string& head, const std::string& body, const std::string& trailers) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx", body.size());
  return head + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
         (body.empty() ? std::string() : std::string(size) + "\r\n" + body + "\r\n") + "0\r\n" + trailers + "\r\n";
}

/// One request on a fresh connection: the response, "" when none came.
inline std::string exchange(int port, const std::string& request,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10), const char* from = nullptr) {
  RawConnection c(port, from);
  c.send(request);  // even when it refuses the rest, it may have answered first
  return c.response(timeout);
}

}  // namespace idem::test
