#include "ui/mainwindow/messagebar.h"

#include <QDesktopServices>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace idem::ui {

MessageBar::MessageBar(QWidget* parent)
    : QFrame(parent), m_text(new QLabel(this)), m_openFolder(new QToolButton(this)), m_expiry(new QTimer(this)) {
  setObjectName(u"messageBar"_s);
  m_text->setObjectName(u"messageText"_s);
  m_text->setTextFormat(Qt::PlainText);
  m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);  // a path the agent may copy
  m_text->setWordWrap(true);
  m_openFolder->setObjectName(u"openFolder"_s);
  m_openFolder->setText(tr("Open &folder"));
  connect(m_openFolder, &QToolButton::clicked, this,
          [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_folder)); });
  auto* close = new QToolButton(this);
  close->setText(u"✕"_s);
  close->setAutoRaise(true);
  close->setToolTip(tr("Dismiss"));
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 3, 4, 3);
  layout->addWidget(m_text, 1);
  layout->addWidget(m_openFolder);
  layout->addWidget(close);
  m_expiry->setSingleShot(true);
  // Long enough to read a sentence twice; a file's message waits for the agent.
  m_expiry->setInterval(20000);
  connect(m_expiry, &QTimer::timeout, this, &QWidget::hide);
  hide();
}

void MessageBar::showText(const QString& text, Kind kind, const QString& folder) {
  static constexpr const char* kColours[] = {"#eaf2fb; border: 1px solid #7aa7d8", "#eaf7ec; border: 1px solid #4caf50",
                                             "#fff4e5; border: 1px solid #e09b00"};
  setStyleSheet(u"#messageBar { background: "_s % QLatin1String(kColours[static_cast<int>(kind)]) %
                u"; border-radius: 4px; }"_s);
  m_text->setText(text);
  m_folder = folder;
  m_openFolder->setVisible(!folder.isEmpty());
  if (folder.isEmpty())
    m_expiry->start();
  else
    m_expiry->stop();
  show();
}

QString MessageBar::text() const { return isVisible() ? m_text->text() : QString(); }

}  // namespace idem::ui
