#include "core/enforce/replaycache.h"

#include <functional>

namespace idem::enforce {
namespace {

std::size_t sizeOf(const store::StoredResponse& r) {
  std::size_t n = r.body.size() + 64;
  for (const auto& [name, value] : r.headers) n += name.size() + value.size() + 32;
  return n;
}

}  // namespace

ReplayCache::ReplayCache(ReplayCacheOptions options) : m_options(options), m_shards(kShards) {}

std::string ReplayCache::idOf(const store::Scope& scope) {
  // Tenants, endpoints and keys hold no NUL (the enforcer vets them), so the id is unambiguous.
  std::string id;
  id.reserve(scope.tenant.size() + scope.endpoint.size() + scope.key.size() + scope.service.size() + 3);
  id.append(scope.tenant).push_back('\0');
  id.append(scope.endpoint).push_back('\0');
  id.append(scope.key).push_back('\0');
  id.append(scope.service);
  return id;
}

ReplayCache::Shard& ReplayCache::shardOf(const std::string& id) const {
  return m_shards[std::hash<std::string>{}(id) % kShards];
}

void ReplayCache::drop(Shard& shard, Lru::iterator it) {
  shard.bytes -= it->bytes;
  shard.index.erase(it->id);
  shard.lru.erase(it);
}

std::optional<ReplayCache::Hit> ReplayCache::find(const store::Scope& scope, const std::string& fingerprint) {
  if (!enabled()) return std::nullopt;
  const std::string id = idOf(scope);
  Shard& shard = shardOf(id);
  const auto now = Clock::now();
  std::lock_guard lock(shard.mutex);
  const auto at = shard.index.find(id);
  if (at == shard.index.end()) {
    ++m_misses;
    return std::nullopt;
  }
  const Lru::iterator it = at->second;
  if (now >= it->deadline) {
    drop(shard, it);
    ++m_expired;
    ++m_misses;
    return std::nullopt;
  }
  // Another payload under this key: the store answers it (422) and traces it.
  if (it->fingerprint != fingerprint) {
    ++m_misses;
    return std::nullopt;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it);
  ++m_hits;
  Hit hit;
  hit.response = it->response;
  hit.generation = it->generation;
  hit.expiresAt = it->expiresAt;
  hit.dbNow = it->dbNowAtRead + std::chrono::duration_cast<std::chrono::milliseconds>(now - it->sentAt).count();
  return hit;
}

bool ReplayCache::holds(const store::Scope& scope) const {
  if (!enabled()) return false;
  const std::string id = idOf(scope);
  Shard& shard = shardOf(id);
  std::lock_guard lock(shard.mutex);
  return shard.index.contains(id);
}

void ReplayCache::put(const store::Scope& scope, const std::string& fingerprint, const store::ClaimResult& replay,
                      Clock::time_point sentAt) {
  if (!enabled() || replay.decision != store::Decision::Replay || !replay.stored || !replay.expiresAt) return;
  // The key's remaining life as the database saw it at the read. The read happened after
  // sentAt, so counting that life from sentAt ends no later than the key does.
  const auto life = std::chrono::milliseconds(*replay.expiresAt - replay.now) - m_options.expiryMargin;
  const auto deadline = sentAt + std::min(life, m_options.maxAge);
  if (deadline <= Clock::now()) return;
  const std::size_t bytes = sizeOf(*replay.stored) + idOf(scope).size() + fingerprint.size();
  if (bytes > m_options.maxBytes / 16) return;

  Entry e;
  e.id = idOf(scope);
  e.fingerprint = fingerprint;
  e.response = std::make_shared<const store::StoredResponse>(*replay.stored);
  e.generation = replay.generation;
  e.expiresAt = *replay.expiresAt;
  e.dbNowAtRead = replay.now;
  e.sentAt = sentAt;
  e.deadline = deadline;
  e.bytes = bytes;

  Shard& shard = shardOf(e.id);
  const std::size_t maxEntries = std::max<std::size_t>(1, m_options.maxEntries / kShards);
  const std::size_t maxBytes = m_options.maxBytes / kShards;
  std::lock_guard lock(shard.mutex);
  if (const auto at = shard.index.find(e.id); at != shard.index.end()) drop(shard, at->second);
  while (!shard.lru.empty() && (shard.lru.size() >= maxEntries || shard.bytes + bytes > maxBytes)) {
    drop(shard, std::prev(shard.lru.end()));
    ++m_evictions;
  }
  shard.bytes += bytes;
  shard.lru.push_front(std::move(e));
  shard.index.emplace(shard.lru.front().id, shard.lru.begin());
}

void ReplayCache::erase(const store::Scope& scope) {
  if (!enabled()) return;
  const std::string id = idOf(scope);
  Shard& shard = shardOf(id);
  std::lock_guard lock(shard.mutex);
  if (const auto at = shard.index.find(id); at != shard.index.end()) drop(shard, at->second);
}

ReplayCache::Stats ReplayCache::stats() const {
  Stats s;
  s.hits = m_hits.load();
  s.misses = m_misses.load();
  s.evictions = m_evictions.load();
  s.expired = m_expired.load();
  for (auto& shard : m_shards) {
    std::lock_guard lock(shard.mutex);
    s.entries += shard.lru.size();
    s.bytes += shard.bytes;
  }
  return s;
}

}  // namespace idem::enforce
