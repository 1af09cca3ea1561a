// idemctl measure's grouping by client (core/measure/attempts.h): one library is one client even
// when its User-Agent lists the same items in another order per process. botocore 1.43 ends its
// User-Agent with the features a call used, "m/E,P,b,N,Z,e", in a set's order that changes from
// one process to the next; the harness runs one process per fault, so the same library showed as
// three clients, each fitted on one fault only (seen in the console's Measure view).
#include <QtTest>

#include "core/measure/attempts.h"

using namespace idem;

namespace {

const char* const kBotocore = "Botocore/1.43.11 ua/2.1 os/linux#6.1 md/arch#x86_64 lang/python#3.11.7 ";

std::vector<measure::Attempt> retried(const std::string& agent, const std::string& profile, long long baseUs) {
  std::vector<measure::Attempt> out;
  for (int n = 0; n < 3; ++n) {
    const long long at = baseUs + n * 500'000LL * (1LL << n);
    out.push_back({at, at + 2000, profile, profile + "-op", "k-" + profile, agent, std::nullopt});
  }
  return out;
}

}  // namespace

class TestMeasureClients : public QObject {
  Q_OBJECT

 private slots:
  void oneLibraryIsOneClientWhateverItsListOrder() {
    std::vector<measure::Attempt> attempts;
    for (const auto& [features, profile] : std::vector<std::pair<std::string, std::string>>{
             {"m/E,P,b,N,Z,e", "500"}, {"m/Z,E,e,b,N,P", "503"}, {"m/Z,b,e,E,N,P", "hang"}}) {
      const auto some = retried(kBotocore + features + " cfg/retry-mode#standard", profile, 1'700'000'000'000'000LL);
      attempts.insert(attempts.end(), some.begin(), some.end());
    }
    const auto clients = measure::analyze(attempts);
    QCOMPARE(clients.size(), std::size_t{1});
    QCOMPARE(clients[0].faults.size(), std::size_t{3});
    QCOMPARE(clients[0].userAgent, std::string(kBotocore) + "m/E,N,P,Z,b,e cfg/retry-mode#standard");
  }

  void differentVersionsOrItemsStayDifferentClients() {
    std::vector<measure::Attempt> attempts = retried(std::string(kBotocore) + "m/E,P", "500", 0);
    for (const auto& agent : {std::string(kBotocore) + "m/E,P,Z", std::string("Botocore/1.29.27 m/E,P"),
                              std::string("python-urllib3/2.7.0")}) {
      const auto some = retried(agent, "500", 0);
      attempts.insert(attempts.end(), some.begin(), some.end());
    }
    QCOMPARE(measure::analyze(attempts).size(), std::size_t{4});
  }
};

QTEST_GUILESS_MAIN(TestMeasureClients)
#include "tst_measure_clients.moc"
