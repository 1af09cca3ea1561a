#include "ui/connection/statuswidget.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/common/dbsession.h"
#include "ui/connection/replication.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
QString dot(const char* color) { return u"<span style='color:"_s % QLatin1String(color) % u"'>●</span> "_s; }
}  // namespace

StatusWidget::StatusWidget(DbSession* session, QWidget* parent) : QLabel(parent), m_session(session) {
  setTextFormat(Qt::RichText);
  connect(session, &DbSession::stateChanged, this, &StatusWidget::refresh);
  connect(session, &DbSession::roundTripMeasured, this, &StatusWidget::refresh);
  refresh();
}

void StatusWidget::refresh() {
  const ServerInfo& i = m_session->info();
  switch (m_session->state()) {
    case DbSession::State::Closed: setText(dot("#999") % tr("not connected")); return;
    case DbSession::State::Connecting: setText(dot("#e09b00") % tr("connecting…")); return;
    case DbSession::State::Reconnecting:
      setText(dot("#e09b00") % (i.standby ? tr("the standby is gone: reconnecting… (%1)") : tr("reconnecting… (%1)"))
                                   .arg(m_session->failure().what.toHtmlEscaped()));
      return;
    case DbSession::State::Failed:
      setText(dot("#d0312d") % m_session->failure().what.toHtmlEscaped());
      return;
    case DbSession::State::Connected: break;
  }
  QStringList parts;
  parts << tr("connected %1 %2").arg(i.endpoint().toHtmlEscaped(), i.database.toHtmlEscaped());
  parts << tr("user %1").arg(i.user.toHtmlEscaped());
  parts << (i.standby ? tr("read-only (standby)") : i.readOnly ? tr("read-only") : tr("<b>read-write</b>"));
  if (const QString rep = replicationText(i, m_session->replication()); !rep.isEmpty()) parts << rep;
  if (const double ms = m_session->lastRoundTripMs(); ms >= 0)
    parts << (ms < 0.1 ? tr("&lt; 0.1 ms") : tr("%1 ms").arg(ms, 0, 'f', ms < 10 ? 1 : 0));
  parts << tr("schema v%1").arg(i.schemaVersion);
  // The policy version is the "default" service's; a store shared by services says how many.
  parts << (i.policyVersion ? tr("policy v%1").arg(i.policyVersion)
            : i.services.isEmpty() ? tr("no policy recorded")
                                   : tr("no policy for service default"));
  if (i.services.size() > 1 || (i.services.size() == 1 && i.services.front() != u"default"_s))
    parts << tr("%n service(s)", nullptr, static_cast<int>(i.services.size()));
  parts << tr("PostgreSQL %1").arg(i.serverVersion.toHtmlEscaped());
  // Plain text over a network, or a certificate nobody checked, is worth seeing at a glance.
  const bool weak = !i.localSocket() && (!i.tls || (i.sslmode != u"verify-full"_s && i.sslmode != u"verify-ca"_s));
  const QString tls = i.tlsSummary().toHtmlEscaped();
  parts << (weak ? QString(u"<b style='color:#d0312d'>"_s % tls % u"</b>"_s) : tls);
  setText(dot("#2e9e44") % parts.join(u" · "_s));
  setToolTip(m_session->failure().kind == ConnectFailure::Kind::SchemaNewer ? m_session->failure().toPlainText()
             : i.standby                                                   ? replicationToolTip()
                                                                           : QString());
}

ConnectionBanner::ConnectionBanner(DbSession* session, QWidget* parent)
    : QFrame(parent), m_session(session), m_text(new QLabel(this)), m_password(new QLineEdit(this)),
      m_remember(new QCheckBox(tr("Remember in the system &keyring"), this)),
      m_connect(new QPushButton(tr("Connect"), this)) {
  setObjectName(u"connectionBanner"_s);
  setFrameShape(QFrame::StyledPanel);
  setStyleSheet(u"#connectionBanner { background: #fff4e5; border: 1px solid #e09b00; border-radius: 4px; }"_s);
  m_text->setTextFormat(Qt::RichText);
  m_text->setWordWrap(true);
  m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_password->setEchoMode(QLineEdit::Password);
  m_password->setPlaceholderText(tr("password"));
  m_remember->setToolTip(tr("Off: the password stays in memory until the console quits. On: once the server "
                            "accepts it, it is kept in the system keyring (never in the console's settings)."));
  auto* retry = new QPushButton(tr("&Retry"), this);
  auto* edit = new QPushButton(tr("&Edit connection…"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_password);
  buttons->addWidget(m_remember);
  buttons->addWidget(m_connect);
  buttons->addStretch(1);
  buttons->addWidget(retry);
  buttons->addWidget(edit);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_text);
  layout->addLayout(buttons);
  auto submit = [this] {
    emit passwordEntered(m_password->text(), m_remember->isChecked());
    m_password->clear();
  };
  connect(m_connect, &QPushButton::clicked, this, submit);
  connect(m_password, &QLineEdit::returnPressed, this, submit);
  connect(retry, &QPushButton::clicked, this, &ConnectionBanner::retryRequested);
  connect(edit, &QPushButton::clicked, this, &ConnectionBanner::editRequested);
  connect(session, &DbSession::stateChanged, this, &ConnectionBanner::refresh);
  refresh();
}

QString ConnectionBanner::messageText() const { return m_text->text(); }

void ConnectionBanner::refresh() {
  const auto state = m_session->state();
  const ConnectFailure& f = m_session->failure();
  const bool show = state == DbSession::State::Failed || state == DbSession::State::Reconnecting;
  setVisible(show && f.isError());
  const bool wantsPassword =
      f.kind == ConnectFailure::Kind::PasswordNeeded || f.kind == ConnectFailure::Kind::WrongPassword;
  m_password->setVisible(wantsPassword);
  m_remember->setVisible(wantsPassword);
  m_connect->setVisible(wantsPassword);
  if (wantsPassword && isVisible()) m_password->setFocus();
  m_text->setText(f.toHtml());
}

}  // namespace idem::ui
