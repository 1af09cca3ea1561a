#include "ui/connection/keyring.h"

#include <qt6keychain/keychain.h>

#include "ui/common/connectparams.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

const QString kService = u"idem-console"_s;

template <typename JobType>
JobType* newJob(QObject* parent, const QString& account) {
  auto* job = new JobType(kService, parent);
  job->setAutoDelete(true);
  job->setInsecureFallback(false);  // a password never lands in a plain-text file
  job->setKey(account);
  return job;
}

QString errorOf(const QKeychain::Job& job) {
  return job.error() == QKeychain::NoError || job.error() == QKeychain::EntryNotFound ? QString() : job.errorString();
}

}  // namespace

Keyring::Keyring(QObject* parent) : QObject(parent) {}

QString Keyring::accountFor(const QString& conninfo) { return ConnectParams::forDisplay(conninfo); }

void Keyring::lookup(const QString& account) {
  auto* job = newJob<QKeychain::ReadPasswordJob>(this, account);
  connect(job, &QKeychain::Job::finished, this, [this, job, account] {
    emit lookedUp(account, job->error() == QKeychain::NoError ? job->textData() : QString(), errorOf(*job));
  });
  job->start();
}

void Keyring::remember(const QString& account, const QString& password) {
  auto* job = newJob<QKeychain::WritePasswordJob>(this, account);
  job->setTextData(password);
  connect(job, &QKeychain::Job::finished, this, [this, job, account] {
    emit remembered(account, job->error() == QKeychain::NoError, errorOf(*job));
  });
  job->start();
}

void Keyring::forget(const QString& account) {
  auto* job = newJob<QKeychain::DeletePasswordJob>(this, account);
  connect(job, &QKeychain::Job::finished, this, [this, job, account] {
    const bool ok = job->error() == QKeychain::NoError || job->error() == QKeychain::EntryNotFound;
    emit forgotten(account, ok, errorOf(*job));
  });
  job->start();
}

}  // namespace idem::ui
