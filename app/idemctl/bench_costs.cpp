#include "app/idemctl/bench_costs.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/store/pg.h"

namespace idemctl::bench {
namespace {

// ---- what the server and this process have spent so far ----

/// utime + stime (+ cutime + cstime: children the process has reaped) of one process, in
/// seconds, and its parent; nullopt when it is gone.
struct ProcCpu {
  double own = 0, reaped = 0;
  long parent = 0;
};

std::optional<ProcCpu> procCpu(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // The command name may hold spaces or parentheses: the fields start after its last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string f[15];  // fields 3..17: state, ppid, …, utime (14), stime, cutime, cstime (17)
  for (auto& v : f)
    if (!(fields >> v)) return std::nullopt;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  ProcCpu p;
  p.parent = std::stol(f[1]);
  p.own = (std::stod(f[11]) + std::stod(f[12])) / tick;
  p.reaped = (std::stod(f[13]) + std::stod(f[14])) / tick;
  return p;
}

bool isPostgres(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  return in && std::getline(in, comm) && comm.starts_with("postgres");
}

/// The CPU every process of the server has used: the postmaster, the backends it reaped (its
/// cutime: the bench's backends, gone by the time this is read) and the children still running.
/// -1 when the server is not a process on this host.
double serverCpuSeconds(long backendPid) {
  const auto backend = procCpu(backendPid);
  if (!backend || !isPostgres(backendPid) || !isPostgres(backend->parent)) return -1;
  const long postmaster = backend->parent;
  const auto top = procCpu(postmaster);
  if (!top) return -1;
  double total = top->own + top->reaped;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto child = procCpu(std::stol(name));
    if (child && child->parent == postmaster) total += child->own;
  }
  return total;
}

double rusageSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

struct Snapshot {
  double commits = 0, walBytes = 0, walRecords = 0, walFpi = 0, serverCpuS = -1, clientCpuS = 0;
};

/// Read once the previous run's connections are closed: a backend reports its counters to the
/// cumulative statistics when it exits (or at most once a second while it lives).
Snapshot snapshot(const std::string& conninfo) {
  idem::pg::Connection c(conninfo);
  // The bench's own connections close asynchronously: wait (briefly) for their backends to exit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto others = c.exec(
        "SELECT pg_stat_clear_snapshot(), (SELECT count(*) FROM pg_stat_activity WHERE datname = "
        "current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend') AS n");
    if (others.integer(0, "n") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto r = c.exec(
      "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits, "
      "w.wal_bytes::float8 AS wal_bytes, w.wal_records AS wal_records, w.wal_fpi AS wal_fpi, pg_backend_pid() AS pid "
      "FROM pg_stat_wal w");
  Snapshot s;
  s.commits = r.real(0, "commits");
  s.walBytes = r.real(0, "wal_bytes");
  s.walRecords = r.real(0, "wal_records");
  s.walFpi = r.real(0, "wal_fpi");
  s.serverCpuS = serverCpuSeconds(static_cast<long>(r.integer(0, "pid")));
  s.clientCpuS = rusageSeconds(RUSAGE_SELF) + rusageSeconds(RUSAGE_CHILDREN);
  return s;
}

/// Adds one measurement's totals to another's.
void add(Costs& into, const Costs& more) {
  into.run.operations += more.run.operations;
  into.run.seconds += more.run.seconds;
  into.commits += more.commits;
  into.walBytes += more.walBytes;
  into.walRecords += more.walRecords;
  into.walFpi += more.walFpi;
  if (more.serverCpuS >= 0) into.serverCpuS = (into.serverCpuS < 0 ? 0 : into.serverCpuS) + more.serverCpuS;
  into.clientCpuS += more.clientCpuS;
}

/// Runs `measure` between two snapshots and adds what it cost to `into`.
template <typename Measure>
void accumulate(const Settings& s, Costs& into, Measure measure) {
  const Snapshot before = snapshot(s.conninfo);
  Costs cost;
  cost.run = measure();
  const Snapshot after = snapshot(s.conninfo);
  cost.commits = after.commits - before.commits;
  cost.walBytes = after.walBytes - before.walBytes;
  cost.walRecords = after.walRecords - before.walRecords;
  cost.walFpi = after.walFpi - before.walFpi;
  if (before.serverCpuS >= 0 && after.serverCpuS >= 0) cost.serverCpuS = after.serverCpuS - before.serverCpuS;
  cost.clientCpuS = after.clientCpuS - before.clientCpuS;
  add(into, cost);
}

// ---- printing ----

struct Column {
  const char* header;
  double (*value)(const Costs&);
  const char* format;  // for one figure
};

const Column kColumns[] = {
    {"keys/s", [](const Costs& c) { return c.run.rate(); }, "%.0f"},
    {"commits/key", [](const Costs& c) { return c.perKey(c.commits); }, "%.2f"},
    {"WAL B/key", [](const Costs& c) { return c.perKey(c.walBytes); }, "%.0f"},
    {"WAL rec/key", [](const Costs& c) { return c.perKey(c.walRecords); }, "%.1f"},
    {"FPI/key", [](const Costs& c) { return c.perKey(c.walFpi); }, "%.3f"},
    {"PG CPU ms/key", [](const Costs& c) { return c.serverCpuS < 0 ? -1 : 1000 * c.perKey(c.serverCpuS); }, "%.3f"},
    {"client CPU ms/key", [](const Costs& c) { return 1000 * c.perKey(c.clientCpuS); }, "%.3f"},
};

std::string cell(const Column& col, double v) {
  if (v < 0) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, col.format, v);
  return buf;
}

std::string ratioCell(double library, double baseline) {
  if (library < 0 || baseline <= 0) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fx", library / baseline);
  return buf;
}

/// The three lines of one client count: each contender, then first / second per column.
std::vector<std::vector<std::string>> lines(const CostRow& r, const Contenders& names) {
  std::vector<std::vector<std::string>> out;
  const std::string n = std::to_string(r.clients);
  const std::string first = r.shape.empty() ? names.first : std::string(names.first) + ", " + r.shape;
  for (const auto& [label, costs] : {std::pair<std::string, const Costs*>{first, &r.first},
                                     {names.second, &r.second}}) {
    std::vector<std::string> line{n, label};
    for (const auto& col : kColumns) line.push_back(cell(col, col.value(*costs)));
    out.push_back(line);
  }
  std::vector<std::string> ratio{n, first + " / " + names.second};
  for (const auto& col : kColumns) ratio.push_back(ratioCell(col.value(r.first), col.value(r.second)));
  out.push_back(ratio);
  return out;
}

/// Each client count `rounds` times, the two contenders alternating which goes first.
template <typename First, typename Second>
std::vector<CostRow> alternate(const Settings& s, const std::vector<int>& clients, int rounds, First first,
                               Second second) {
  std::vector<CostRow> rows;
  rows.reserve(clients.size());
  for (int n : clients) rows.push_back(CostRow{n, {}, {}, {}});
  for (int round = 0; round < rounds; ++round)
    for (auto& row : rows) {
      const auto a = [&] { accumulate(s, row.first, [&] { return first(row.clients); }); };
      const auto b = [&] { accumulate(s, row.second, [&] { return second(row.clients); }); };
      if (round % 2 == 0) {
        a();
        b();
      } else {
        b();
        a();
      }
    }
  return rows;
}

}  // namespace

std::vector<CostRow> measureNewKeyCosts(const Settings& s, const std::vector<int>& clients, int rounds) {
  return alternate(
      s, clients, rounds, [&](int n) { return libraryNewKeysRun(s, n); },
      [&](int n) { return pgbenchRun(s, Script::MinimalNew, n, Protocol::Prepared); });
}

std::vector<CostRow> measureInFlightCosts(const Settings& s, const std::vector<int>& clients, int rounds, int fixed,
                                          std::vector<std::string>* settled) {
  return alternate(
      s, clients, rounds,
      [&](int n) {
        idem::store::WriteBatchStats batched;
        const Run run = libraryNewKeysRun(s, n, {}, &batched);
        if (settled != nullptr)
          settled->push_back(std::to_string(n) + " clients: " + std::to_string(batched.claimSlots) + "/" +
                             std::to_string(batched.completionSlots));
        return run;
      },
      [&](int n) { return libraryNewKeysRun(s, n, {static_cast<std::size_t>(fixed)}); });
}

namespace {

/// One way of making new keys beside pgbench's minimal INSERT + UPDATE: its row's label, and
/// the run at a client count.
struct Contender {
  std::string shape;
  std::function<Run()> run;
};

/// Every contender a client count has (`contendersAt`), and pgbench's minimal INSERT + UPDATE at
/// that count, each once a round, the order turning from round to round so no run always follows
/// the same one; every contender's row is set beside the same minimal runs.
template <typename ContendersAt>
std::vector<CostRow> besideMinimal(const Settings& s, const std::vector<int>& clients, int rounds,
                                   ContendersAt contendersAt) {
  std::vector<CostRow> rows;
  std::vector<std::vector<std::pair<std::size_t, Contender>>> groups;  // each client count's
  for (int n : clients) {
    auto& group = groups.emplace_back();
    for (Contender& c : contendersAt(n)) {
      rows.push_back(CostRow{n, {}, {}, c.shape});
      group.emplace_back(rows.size() - 1, std::move(c));
    }
  }
  for (int round = 0; round < rounds; ++round)
    for (const auto& group : groups) {
      const int n = rows[group.front().first].clients;
      Costs minimal;
      std::vector<std::function<void()>> runs;
      runs.emplace_back(
          [&] { accumulate(s, minimal, [&] { return pgbenchRun(s, Script::MinimalNew, n, Protocol::Prepared); }); });
      for (const auto& [row, contender] : group)
        runs.emplace_back([&s, &rows, row = row, &contender = contender] { accumulate(s, rows[row].first, contender.run); });
      const std::size_t start = static_cast<std::size_t>(round) % runs.size();
      for (std::size_t k = 0; k < runs.size(); ++k) runs[(start + k) % runs.size()]();
      for (const auto& entry : group) add(rows[entry.first].second, minimal);
    }
  return rows;
}

}  // namespace

std::vector<CostRow> measureBatchBound(const Settings& s, const std::vector<int>& clients, int rounds) {
  return besideMinimal(s, clients, rounds, [&s](int n) {
    std::vector<Contender> shapes;
    for (int c = n; c >= 1; --c)
      if (n % c == 0)
        shapes.push_back({std::to_string(c) + " x " + std::to_string(n / c) + " keys",
                          [&s, c, n] { return pgbenchIdemBatchRun(s, c, n / c); }});
    return shapes;
  });
}

std::vector<CostRow> measureWritePaths(const Settings& s, const std::vector<int>& clients, int rounds) {
  return besideMinimal(s, clients, rounds, [&s](int n) {
    return std::vector<Contender>{
        {"store alone, thread per request", [&s, n] { return storeWritesThreadsRun(s, n); }},
        {"store alone, event loop", [&s, n] { return storeWritesEventLoopRun(s, n); }},
        {"library, thread per request", [&s, n] { return libraryNewKeysRun(s, n); }},
        {"library, event loop", [&s, n] { return libraryNewKeysEventLoopRun(s, n); }}};
  });
}

std::vector<CostRow> measureCrossKeyCosts(const Settings& s, const std::vector<int>& clients, int rounds,
                                          bool onEventLoop) {
  const auto run = onEventLoop ? libraryDistinctNewKeysEventLoopRun : libraryDistinctNewKeysRun;
  return alternate(
      s, clients, rounds, [&](int n) { return run(s, n, true); }, [&](int n) { return run(s, n, false); });
}

std::string costsText(const std::vector<CostRow>& rows, const Contenders& names) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-8s %-30s", "clients", "new keys");
  out += buf;
  for (const auto& col : kColumns) {
    std::snprintf(buf, sizeof buf, " %17s", col.header);
    out += buf;
  }
  out += '\n';
  for (const auto& r : rows)
    for (const auto& line : lines(r, names)) {
      std::snprintf(buf, sizeof buf, "%-8s %-30s", line[0].c_str(), line[1].c_str());
      out += buf;
      for (std::size_t i = 2; i < line.size(); ++i) {
        std::snprintf(buf, sizeof buf, " %17s", line[i].c_str());
        out += buf;
      }
      out += '\n';
    }
  return out;
}

std::string costsMarkdown(const std::vector<CostRow>& rows, const Contenders& names) {
  std::string out = "| clients | new keys |";
  std::string rule = "|---|---|";
  for (const auto& col : kColumns) {
    out += std::string(" ") + col.header + " |";
    rule += "---:|";
  }
  out += '\n' + rule + '\n';
  for (const auto& r : rows)
    for (const auto& line : lines(r, names)) {
      out += '|';
      for (const auto& c : line) out += ' ' + c + " |";
      out += '\n';
    }
  return out;
}

std::string costsJson(const std::vector<CostRow>& rows, const Contenders& names, int secondsPerFigure, int rounds) {
  const auto contender = [](const Costs& c) {
    nlohmann::json per;
    for (const auto& col : kColumns)
      if (col.value(c) >= 0) per[col.header] = col.value(c);
    return nlohmann::json{{"keys", c.run.operations},
                          {"seconds", c.run.seconds},
                          {"commits", c.commits},
                          {"wal_bytes", c.walBytes},
                          {"wal_records", c.walRecords},
                          {"wal_fpi", c.walFpi},
                          {"server_cpu_s", c.serverCpuS},
                          {"client_cpu_s", c.clientCpuS},
                          {"figures", per}};
  };
  nlohmann::json out{{"seconds_per_figure", secondsPerFigure}, {"rounds", rounds}, {"runs", nlohmann::json::array()}};
  for (const auto& r : rows) {
    nlohmann::json ratios;
    for (const auto& col : kColumns) {
      const double a = col.value(r.first), b = col.value(r.second);
      if (a >= 0 && b > 0) ratios[col.header] = a / b;
    }
    nlohmann::json run{{"clients", r.clients},
                       {names.firstJson, contender(r.first)},
                       {names.secondJson, contender(r.second)},
                       {"ratios", ratios}};
    if (!r.shape.empty()) run["shape"] = r.shape;
    out["runs"].push_back(std::move(run));
  }
  return out.dump(2) + '\n';
}

}  // namespace idemctl::bench
