#include "ui/connection/connectiondialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>

using namespace Qt::StringLiterals;

namespace idem::ui {

ConnectionDialog::ConnectionDialog(QList<ConnectionProfile> profiles, const QString& current, QWidget* parent)
    : QDialog(parent), m_profiles(std::move(profiles)), m_list(new QListWidget(this)), m_name(new QLineEdit(this)),
      m_kind(new QComboBox(this)), m_pages(new QStackedWidget(this)), m_host(new QLineEdit(this)),
      m_port(new QSpinBox(this)), m_database(new QLineEdit(this)), m_user(new QLineEdit(this)),
      m_sslmode(new QComboBox(this)), m_conninfo(new QLineEdit(this)), m_service(new QLineEdit(this)),
      m_readOnly(new QCheckBox(tr("Read-only session (recommended)"), this)), m_error(new QLabel(this)) {
  setWindowTitle(tr("Connect to an Idem store"));
  m_kind->addItems({tr("Host and database"), tr("Connection string or URI"), tr("Service (pg_service.conf)")});
  m_port->setRange(1, 65535);
  m_sslmode->addItems({QString(), u"disable"_s, u"prefer"_s, u"require"_s, u"verify-ca"_s, u"verify-full"_s});
  m_sslmode->setToolTip(tr("Empty: verify-full for a network host (TLS, the server's certificate and name checked "
                           "against ~/.postgresql/root.crt or sslrootcert); a Unix socket needs none."));
  m_error->setWordWrap(true);
  m_error->setStyleSheet(u"color: #d0312d"_s);
  m_error->hide();
  m_host->setPlaceholderText(tr("db.example.com, or a socket folder"));
  m_database->setPlaceholderText(u"idem"_s);
  m_conninfo->setPlaceholderText(u"host=… dbname=idem user=support_ro   or   postgresql://support_ro@host/idem"_s);
  m_service->setPlaceholderText(u"idem-prod-replica"_s);

  auto* fields = new QWidget(this);
  auto* ff = new QFormLayout(fields);
  ff->addRow(tr("Host:"), m_host);
  ff->addRow(tr("Port:"), m_port);
  ff->addRow(tr("Database:"), m_database);
  ff->addRow(tr("User:"), m_user);
  ff->addRow(tr("SSL mode:"), m_sslmode);
  auto* conn = new QWidget(this);
  auto* cf = new QFormLayout(conn);
  cf->addRow(tr("Conninfo:"), m_conninfo);
  auto* svc = new QWidget(this);
  auto* sf = new QFormLayout(svc);
  sf->addRow(tr("Service:"), m_service);
  m_pages->addWidget(fields);
  m_pages->addWidget(conn);
  m_pages->addWidget(svc);

  auto* note = new QLabel(tr("Passwords (and sslpassword) are never saved in the console's settings. The console uses ~/.pgpass (or "
                             "PGPASSWORD), then the system keyring, and otherwise asks; a typed password stays in "
                             "memory unless you tick \"Remember in the system keyring\"."),
                          this);
  note->setWordWrap(true);
  auto* form = new QFormLayout;
  form->addRow(tr("Name:"), m_name);
  form->addRow(tr("Kind:"), m_kind);
  auto* right = new QVBoxLayout;
  right->addLayout(form);
  right->addWidget(m_pages);
  right->addWidget(m_readOnly);
  right->addWidget(note);
  right->addWidget(m_error);
  right->addStretch(1);

  auto* add = new QPushButton(tr("&New"), this);
  auto* remove = new QPushButton(tr("&Delete"), this);
  auto* listButtons = new QHBoxLayout;
  listButtons->addWidget(add);
  listButtons->addWidget(remove);
  auto* left = new QVBoxLayout;
  left->addWidget(m_list, 1);
  left->addLayout(listButtons);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  auto* connectButton = buttons->addButton(tr("&Connect"), QDialogButtonBox::AcceptRole);
  connectButton->setDefault(true);
  auto* body = new QHBoxLayout;
  body->addLayout(left, 1);
  body->addLayout(right, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(body, 1);
  layout->addWidget(buttons);

  connect(m_kind, &QComboBox::currentIndexChanged, m_pages, &QStackedWidget::setCurrentIndex);
  connect(m_list, &QListWidget::currentRowChanged, this, &ConnectionDialog::showProfile);
  connect(add, &QPushButton::clicked, this, &ConnectionDialog::addProfile);
  connect(remove, &QPushButton::clicked, this, &ConnectionDialog::removeProfile);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    storeForm();
    if (m_row >= 0) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_list, &QListWidget::itemDoubleClicked, this, [this] {
    storeForm();
    accept();
  });

  for (const auto& p : m_profiles) m_list->addItem(p.name);
  if (m_profiles.isEmpty()) addProfile();
  int start = 0;
  for (int i = 0; i < m_profiles.size(); ++i)
    if (m_profiles[i].name == current) start = i;
  m_list->setCurrentRow(start);
  resize(720, 380);
}

ConnectionProfile ConnectionDialog::chosen() const {
  return (m_row >= 0 && m_row < m_profiles.size()) ? m_profiles[m_row] : ConnectionProfile{};
}

void ConnectionDialog::done(int result) {
  storeForm();
  for (int i = 0; i < m_profiles.size(); ++i) {
    const QString problem = profileProblem(m_profiles[i]);
    if (problem.isEmpty()) continue;
    m_error->setText(problem);
    m_error->show();
    m_list->setCurrentRow(i);
    m_conninfo->setFocus();
    return;
  }
  m_error->hide();
  QDialog::done(result);
}

void ConnectionDialog::storeForm() {
  if (m_row < 0 || m_row >= m_profiles.size()) return;
  ConnectionProfile& p = m_profiles[m_row];
  p.name = m_name->text().trimmed().isEmpty() ? tr("Profile %1").arg(m_row + 1) : m_name->text().trimmed();
  p.kind = static_cast<ConnectionProfile::Kind>(m_kind->currentIndex());
  p.host = m_host->text().trimmed();
  p.port = m_port->value();
  p.database = m_database->text().trimmed();
  p.user = m_user->text().trimmed();
  p.sslmode = m_sslmode->currentText();
  p.conninfo = m_conninfo->text().trimmed();
  p.service = m_service->text().trimmed();
  p.readOnly = m_readOnly->isChecked();
  if (auto* item = m_list->item(m_row)) item->setText(p.name);
}

void ConnectionDialog::showProfile(int row) {
  storeForm();
  m_row = row;
  if (row < 0 || row >= m_profiles.size()) return;
  const ConnectionProfile& p = m_profiles[row];
  m_name->setText(p.name);
  m_kind->setCurrentIndex(static_cast<int>(p.kind));
  m_host->setText(p.host);
  m_port->setValue(p.port);
  m_database->setText(p.database);
  m_user->setText(p.user);
  m_sslmode->setCurrentText(p.sslmode);
  m_conninfo->setText(p.conninfo);
  m_service->setText(p.service);
  m_readOnly->setChecked(p.readOnly);
}

void ConnectionDialog::addProfile() {
  storeForm();
  ConnectionProfile p;
  p.name = tr("Profile %1").arg(m_profiles.size() + 1);
  p.host = u"localhost"_s;
  p.database = u"idem"_s;
  m_profiles.append(p);
  m_list->addItem(p.name);
  m_list->setCurrentRow(static_cast<int>(m_profiles.size()) - 1);
}

void ConnectionDialog::removeProfile() {
  const int row = m_row;
  if (row < 0 || row >= m_profiles.size()) return;
  m_row = -1;  // nothing to store from the form of the removed profile
  m_profiles.removeAt(row);
  delete m_list->takeItem(row);
}

}  // namespace idem::ui
