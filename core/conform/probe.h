#pragma once
// What every scenario does to the service: mint keys new to the run, build bodies and headers,
// send a request and keep it as evidence, and count executions (from a count endpoint, or from
// the created resources' ids in 2xx answers).
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/conform/kit.h"

namespace idem::conform {

/// "https://h:8443/api" -> {"https://h:8443", "/api"}; nullopt for anything but http(s).
struct Url {
  std::string origin;  // scheme://host[:port]
  std::string path;    // without a trailing '/'; "" for none
  static std::optional<Url> parse(const std::string& text);
};

/// Where a count stood before a scenario's requests (count endpoint only).
struct Mark {
  std::optional<long long> count;
};

/// Executions a scenario's requests caused: a number, or why it cannot be known.
struct Executions {
  std::optional<long long> n;
  std::string detail;  // "count 12 -> 13" / "ids ch_1, ch_2" / why unknown
};

class Probe {
 public:
  /// Throws std::invalid_argument for a URL, --id-field or --count-url that cannot be used.
  explicit Probe(const Options& options);

  [[nodiscard]] const Options& options() const { return m_options; }
  [[nodiscard]] const std::string& runId() const { return m_runId; }
  /// How executions are counted, in words (for the report).
  [[nodiscard]] std::string counting() const;

  /// A key no earlier request of any run used, as an RFC 9651 sf-string ("conform-RUN-SCENARIO-N").
  std::string newKey(const std::string& scenario);
  /// The body with "{unique}" replaced by a value new to this scenario of this run.
  [[nodiscard]] std::string body(const std::string& scenario) const;
  /// The options' headers, Content-Type when they name none, the tenant (when the options name
  /// a tenant header: tenant 0 or 1) and the key (none when empty).
  [[nodiscard]] http::Headers headers(const std::string& key, int tenant = 0) const;
  [[nodiscard]] const std::string& tenant(int which) const { return m_tenants[which == 0 ? 0 : 1]; }

  /// Sends one request on this probe's connection and keeps it as evidence. The first request
  /// of a run that gets no answer throws Unreachable.
  Exchange send(const std::string& label, const Route& route, const http::Headers& headers, const std::string& body);
  /// The same on a connection of its own (for requests sent side by side from other threads);
  /// pass the exchanges to reached() once they are back.
  Exchange sendAlone(const std::string& label, const Route& route, const http::Headers& headers,
                     const std::string& body) const;
  /// Throws Unreachable when none of these got an answer and nothing before them did.
  void reached(const std::vector<Exchange>& exchanges);

  Mark mark();
  /// Executions since `mark` (count endpoint), or distinct ids among the 2xx answers.
  Executions executions(const Mark& mark, const std::vector<Exchange>& answers);
  /// The created resource's id in a 2xx answer (by --id-field); nullopt when it has none.
  [[nodiscard]] std::optional<std::string> resourceId(const Exchange& answer) const;

 private:
  Exchange exchange(client::Client& client, const std::string& label, const Route& route, const http::Headers& headers,
                    const std::string& body) const;
  std::optional<long long> readCount(std::string& error);

  Options m_options;
  Url m_url;
  std::string m_runId;
  std::string m_tenants[2];
  std::unique_ptr<client::Client> m_client;
  std::unique_ptr<client::Client> m_countClient;
  std::string m_countPath;
  int m_keys = 0;
  bool m_answered = false;
};

/// A 2xx status?
[[nodiscard]] inline bool succeeded(const Exchange& e) { return e.status >= 200 && e.status < 300; }

}  // namespace idem::conform
