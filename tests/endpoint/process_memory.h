#pragma once
// Resident memory of a child process, read from /proc, for the tests that bound what a real
// `idemctl serve` or `proxy` keeps under abuse (tst_resourcebounds, tst_replaybudget).
#include <sys/types.h>

#include <fstream>
#include <string>

namespace idem::test {

// Under AddressSanitizer or ThreadSanitizer the allocator is the sanitizer's (freed memory waits
// in ASan's quarantine; TSan keeps shadow memory per allocation): resident memory then says
// nothing about the server's own buffers, so only the gauges are checked.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kResidentMemoryMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kResidentMemoryMeaningful = false;
#else
constexpr bool kResidentMemoryMeaningful = true;
#endif
#else
constexpr bool kResidentMemoryMeaningful = true;
#endif

/// A field of /proc/PID/status in KiB: "VmRSS" (resident now) or "VmHWM" (the peak); -1 when absent.
inline long long statusKiB(pid_t pid, const std::string& field = "VmRSS") {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  return -1;
}

/// Resident memory of a process, in KiB (VmRSS).
inline long long residentKiB(pid_t pid) { return statusKiB(pid, "VmRSS"); }

/// Starts VmHWM over from the resident size now (Linux 4.0+: clear_refs 5), so a later read
/// is the peak of what came after. false when the kernel refused.
inline bool resetPeakResident(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace idem::test
