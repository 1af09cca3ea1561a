// Raw bytes through the endpoint's real transport (core/endpoint/server.h: listener, limits,
// parser, deadlines) over loopback, answered by a fake handler that only records what reached
// it. The server starts once on a fresh database in $IDEM_FUZZ_CONNINFO's cluster (its
// constructor checks the schema); the handler never touches the store.
//
// Input: the bytes a client sends on one connection (then it half-closes and reads to the end).
// Checked for every input:
// - the server answers or closes within 5 s, and stays up (the next input is served);
// - what comes back is well-formed HTTP/1.1: status lines, fields, Content-Length bodies,
//   a Request-Id on every answer, problem+json bodies that parse;
// - nothing reaches the handler that the checks refused: no method in the wrong case, no
//   Content-Encoding but identity, at most --max-headers fields, a body within --max-body, and
//   exactly the header fields of a request's header block: Beast's stock parser, fed the
//   same bytes, gives the oracle (its fields when the header block ends; trailer fields it
//   would merge later must not appear).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/endpoint/server.h"
#include "core/http/headers.h"
#include "core/policy/policy.h"
#include "resources/embedded_resources.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_store.h"

using idem::fuzz::check;
namespace endpoint = idem::endpoint;
namespace server = idem::server;
namespace bhttp = boost::beast::http;

namespace {

constexpr std::size_t kMaxHeaders = 12;
constexpr std::size_t kMaxHeaderBytes = 2048;
constexpr std::size_t kMaxBody = 1024;

struct Seen {
  std::string method;
  idem::http::Headers headers;
  std::string body;
};

// The execution behind the gate: records what reached it and answers 200 with a small JSON body.
class RecordingHandler : public idem::gate::Execution {
 public:
  [[nodiscard]] Thread thread() const override { return Thread::Loop; }
  void run(const idem::gate::CallPtr& call) override {
    const server::Request& r = call->request();
    {
      std::lock_guard lock(m_mutex);
      m_seen.push_back({r.method, r.headers, r.body});
    }
    idem::gate::Result result;
    result.response.status = 200;
    result.response.headers.emplace_back("Content-Type", "application/json");
    result.response.body = R"({"ok":true})";
    call->finish(std::move(result));
  }
  std::vector<Seen> take() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_seen, {});
  }

 private:
  std::mutex m_mutex;
  std::vector<Seen> m_seen;
};

RecordingHandler* g_handler = nullptr;
std::unique_ptr<endpoint::Server> g_server;

// Sends `input` on a fresh connection, half-closes, and reads until the server closes.
std::string exchange(std::string_view input) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(g_server->port()));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  // libFuzzer's timers interrupt blocking calls (EINTR): an interrupted connect goes on by
  // itself, so it is waited for rather than failed; an interrupted send or recv is repeated.
  int connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (connected != 0 && errno == EINTR) {
    pollfd w{fd, POLLOUT, 0};
    while (::poll(&w, 1, 5000) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    connected = error == 0 ? 0 : -1;
    errno = error;
  }
  check(connected == 0, "the server accepts connections", std::strerror(errno));
  for (std::size_t sent = 0; sent < input.size();) {
    const ssize_t n = ::send(fd, input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it refused and closed: what it answered is still to be read
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    check(left > 0, "the server answers or closes within 5 s", out.substr(0, 200));
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[8192];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // closed (or reset after a refusal)
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// Every response in `raw` is a status line, fields, and a body of its Content-Length (a HEAD
// answer, or an interim 1xx, has none).
void checkResponses(std::string_view raw) {
  while (!raw.empty()) {
    check(raw.starts_with("HTTP/1.1 ") && raw.size() >= 12, "a response starts with a status line",
          std::string(raw.substr(0, 80)));
    const int status = std::atoi(std::string(raw.substr(9, 3)).c_str());
    check(status >= 100 && status <= 599, "a status is 100..599", std::string(raw.substr(0, 80)));
    const auto end = raw.find("\r\n\r\n");
    check(end != std::string_view::npos, "a response's head ends", std::string(raw.substr(0, 200)));
    const std::string_view head = raw.substr(0, end + 2);
    std::size_t length = 0;
    bool hasLength = false, hasRequestId = false, problem = false;
    for (std::size_t at = head.find("\r\n") + 2; at < head.size();) {
      const auto eol = head.find("\r\n", at);
      const std::string_view line = head.substr(at, eol - at);
      const auto colon = line.find(": ");
      check(colon != std::string_view::npos && colon > 0, "a response field is Name: value", std::string(line));
      const std::string_view name = line.substr(0, colon), value = line.substr(colon + 2);
      if (idem::http::equalsIgnoreCase(name, "Content-Length")) {
        hasLength = true;
        length = std::stoul(std::string(value));
      }
      hasRequestId |= idem::http::equalsIgnoreCase(name, "Request-Id");
      problem |= idem::http::equalsIgnoreCase(name, "Content-Type") && value == "application/problem+json";
      at = eol + 2;
    }
    raw.remove_prefix(end + 4);
    if (status < 200) continue;
    check(hasLength, "a final response has a Content-Length", std::string(head));
    check(hasRequestId, "every answer names its request (Request-Id)", std::string(head));
    if (raw.size() < length || (length > 0 && raw.starts_with("HTTP/1.1 "))) continue;  // a HEAD answer
    if (problem)
      check(!nlohmann::json::parse(raw.substr(0, length), nullptr, false).is_discarded(),
            "a problem body is JSON", std::string(raw.substr(0, length)));
    raw.remove_prefix(length);
  }
}

// The oracle: Beast's stock parser over the same bytes, under the same limits, gives each
// complete request's header fields as they stood when its header block ended.
std::vector<idem::http::Headers> headerBlocks(std::string_view input) {
  std::vector<idem::http::Headers> blocks;
  while (!input.empty()) {
    bhttp::request_parser<bhttp::string_body> p;
    p.header_limit(kMaxHeaderBytes);
    p.body_limit(kMaxBody);
    p.eager(false);
    boost::beast::error_code ec;
    idem::http::Headers fields;
    try {
      while (!p.is_header_done()) {
        const auto n = p.put(boost::asio::buffer(input.data(), input.size()), ec);
        if (ec || n == 0) return blocks;  // refused, or incomplete at the end of the input
        input.remove_prefix(n);
      }
      for (const auto& f : p.get()) fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
      p.eager(true);
      while (!p.is_done()) {
        const auto n = p.put(boost::asio::buffer(input.data(), input.size()), ec);
        if (ec || n == 0) return blocks;  // refused, or incomplete at the end of the input
        input.remove_prefix(n);
      }
    } catch (const std::exception&) {
      return blocks;  // what the stock parser throws on, the transport refuses
    }
    blocks.push_back(std::move(fields));
  }
  return blocks;
}

bool wrongCase(std::string_view method) {
  for (std::string_view m : {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
    if (idem::http::equalsIgnoreCase(method, m)) return method != m;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  endpoint::ServerOptions o;
  o.conninfo = idem::fuzz::freshDatabase("fuzz_front");
  o.policy = idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"), "demo-policy.json");
  o.threads = 2;
  o.poolSize = 1;
  o.maxHeaderCount = kMaxHeaders;
  o.maxHeaderBytes = kMaxHeaderBytes;
  o.maxBodyBytes = kMaxBody;
  o.maxBufferedBodyBytes = 4 * kMaxBody;
  o.headerTimeout = o.bodyTimeout = o.idleTimeout = o.writeTimeout = std::chrono::seconds(2);
  o.execution = [](idem::gate::Host&) {
    auto h = std::make_unique<RecordingHandler>();
    g_handler = h.get();
    return h;
  };
  g_server = std::make_unique<endpoint::Server>(std::move(o));
  g_server->start();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string answer = exchange(input);
  checkResponses(answer);
  const auto seen = g_handler->take();
  const auto blocks = headerBlocks(input);
  // Requests the transport answered itself (a malformed target) keep the connection: the
  // handler's requests are a subsequence of the complete ones, in order.
  std::size_t next = 0;
  for (const Seen& r : seen) {
    check(!wrongCase(r.method), "no method in the wrong case reaches the handler", r.method);
    check(r.headers.size() <= kMaxHeaders, "at most --max-headers fields reach the handler");
    check(r.body.size() <= kMaxBody, "no body past --max-body reaches the handler");
    for (const auto& [name, value] : r.headers)
      check(!idem::http::equalsIgnoreCase(name, "Content-Encoding") || idem::http::equalsIgnoreCase(value, "identity"),
            "no Content-Encoding but identity reaches the handler", value);
    while (next < blocks.size() && blocks[next] != r.headers) ++next;
    check(next < blocks.size(), "the handler sees a header block's fields, never a trailer field");
    ++next;
  }
  return 0;
}
