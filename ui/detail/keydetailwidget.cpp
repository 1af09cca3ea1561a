#include "ui/detail/keydetailwidget.h"

#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include "ui/common/dbsession.h"
#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"
#include "ui/detail/responseview.h"
#include "ui/explain/explainview.h"
#include "ui/keydata/detailquery.h"
#include "ui/keydata/generationmodel.h"
#include "ui/trace/eventmodel.h"
#include "ui/trace/traceview.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// What was charged, as the customer's letter says it: " · $10.00 each", or why it is unknown
// when the policy names where to read it; empty when it names nothing for the route.
QString amountText(const KeyDetail& d) {
  QStringList amounts;
  QString problem;
  for (const auto& e : d.explanation.resolution.executions) {
    if (e.amount)
      amounts << QString::fromStdString(policy::formatMoney(*e.amount));
    else if (!e.amountProblem.empty() && problem.isEmpty())
      problem = QString::fromStdString(e.amountProblem);
  }
  amounts.removeDuplicates();
  if (amounts.size() == 1)
    return u" · "_s % (d.executions() > 1 ? QObject::tr("%1 each") : u"%1"_s).arg(amounts.front());
  if (amounts.size() > 1) return u" · "_s % amounts.join(u", "_s);
  if (!problem.isEmpty()) return u" · "_s % QObject::tr("amount unknown (%1)").arg(problem);
  return {};
}

// The duplicates across keys the key takes part in, each with its other key as a link:
// " · repeats k1 (pay_X, 40 s earlier): both ran".
QString crossKeyText(const KeyDetail& d) {
  QString out;
  for (const auto& f : d.explanation.crossKey) {
    const QString other = QString::fromStdString(f.thisKeyIsLater ? f.earlierKey : f.laterKey);
    const QString link = u"<a href='key:%1'>%2</a>"_s.arg(QString::fromLatin1(QUrl::toPercentEncoding(other)),
                                                          other.toHtmlEscaped());
    QStringList facts;
    const auto& resource = f.thisKeyIsLater ? f.earlierResource : f.laterResource;
    if (resource) facts << QString::fromStdString(*resource).toHtmlEscaped();
    if (f.gap)
      facts << (f.thisKeyIsLater ? QObject::tr("%1 earlier") : QObject::tr("%1 later"))
                   .arg(formatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(*f.gap).count()));
    using O = trace::Outcome;
    const QString what = f.outcome == O::DuplicateObserved    ? QObject::tr("both ran")
                         : f.outcome == O::DuplicateConfirmed ? QObject::tr("both ran, confirmed by the client")
                         : f.outcome == O::DuplicateHeld      ? QObject::tr("the repeat was held (409)")
                                                              : QObject::tr("the repeat was refused (409)");
    const QString pair = (f.thisKeyIsLater ? QObject::tr("repeats %1") : QObject::tr("repeated by %1")).arg(link);
    const QColor colour = outcomeStyle(f.outcome == O::DuplicateObserved ? O::ExecutedAfterExpiry : O::Conflict).color;
    out += u" · <b style='color:%1'>"_s.arg(colour.name()) % pair %
           (facts.isEmpty() ? QString() : u" ("_s % facts.join(u", "_s) % u")"_s) % u": "_s % what % u"</b>"_s;
  }
  return out;
}

}  // namespace

KeyDetailWidget::KeyDetailWidget(DbSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_header(new QLabel(this)), m_placeholder(new QLabel(this)),
      m_tabs(new QTabWidget(this)),
      m_response(new ResponseView(this)), m_generations(new GenerationModel(this)),
      m_generationTable(new QTableView(this)), m_events(new EventModel(this)), m_trace(new TraceView(m_events, this)),
      m_explain(new ExplainView(m_events, this)) {
  m_header->setObjectName(u"keyHeader"_s);
  m_header->setTextFormat(Qt::RichText);
  m_header->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  // The other key of a duplicate across keys opens in place.
  connect(m_header, &QLabel::linkActivated, this, [this](const QString& link) {
    if (!link.startsWith(u"key:"_s)) return;
    emit relatedKeyActivated(KeyRef{m_ref.tenant, m_ref.endpoint,
                                    QUrl::fromPercentEncoding(link.mid(4).toLatin1()), m_ref.service});
  });
  m_header->setWordWrap(true);
  m_generationTable->setModel(m_generations);
  m_generationTable->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_generationTable->verticalHeader()->hide();
  m_generationTable->horizontalHeader()->setStretchLastSection(true);
  m_tabs->addTab(m_response, tr("&Response"));
  m_tabs->addTab(m_generationTable, tr("&Generations"));
  m_tabs->addTab(m_trace, tr("&Trace"));
  m_tabs->addTab(m_explain, tr("E&xplain"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_header);
  layout->addWidget(m_tabs, 1);
  // Empty tabs (a Header/Value table with no rows) read as "this key has nothing".
  m_placeholder->setObjectName(u"detailPlaceholder"_s);
  m_placeholder->setAlignment(Qt::AlignCenter);
  m_placeholder->setWordWrap(true);
  m_placeholder->setTextFormat(Qt::RichText);
  layout->addWidget(m_placeholder, 1);
  showKey({});
  // Another zone: the same detail explained and shown again, without a trip to the store.
  connect(&TimeZoneSetting::instance(), &TimeZoneSetting::changed, this, [this] {
    apply(m_detail, m_response->shownGeneration());
  });
}

void KeyDetailWidget::setCurrentTab(Tab tab) { m_tabs->setCurrentIndex(tab); }

void KeyDetailWidget::showKey(const KeyRef& ref, int generation) {
  m_ref = ref;
  m_focusGeneration = generation;
  ++m_generation;
  m_tabs->setVisible(ref.isValid());
  m_placeholder->setVisible(!ref.isValid());
  if (!ref.isValid()) {
    apply(noKeyDetail(), 0);
    m_header->clear();
    m_placeholder->setText(tr("<p style='color:#666'>No key is open.</p><p>Select a key above, or press "
                              "<b>Ctrl+K</b> and paste a key or a customer's pay_… / re_… / ord_… id.</p>"));
    return;
  }
  m_header->setText(tr("<b>%1</b> · %2 %3 · service %4 · loading…")
                        .arg(ref.key.toHtmlEscaped(), ref.tenant.toHtmlEscaped(), ref.endpoint.toHtmlEscaped(),
                             ref.service.toHtmlEscaped()));
  reload();
}

void KeyDetailWidget::clear(const QString& why) {
  showKey({});
  m_placeholder->setText(u"<p><b>"_s % why.toHtmlEscaped() % u"</b></p><p style='color:#666'>"_s %
                         tr("No key is open.").toHtmlEscaped() % u"</p>"_s);
}

QString KeyDetailWidget::placeholderText() const { return m_placeholder->isVisibleTo(this) ? m_placeholder->text() : QString(); }

QString KeyDetailWidget::headerText() const { return m_header->text(); }

void KeyDetailWidget::setStale(bool stale) {
  if (m_stale == stale) return;
  m_stale = stale;
  if (m_detail->ref.isValid()) apply(m_detail, m_response->shownGeneration());
}

void KeyDetailWidget::reload() {
  if (!m_ref.isValid()) return;
  const quint64 generation = ++m_generation;
  const KeyRef ref = m_ref;
  m_session->submit<SharedKeyDetail>(
      this,
      [ref, zone = TimeZoneSetting::instance().coreZone()](pg::Connection& conn) -> SharedKeyDetail {
        return std::make_shared<const KeyDetail>(loadKeyDetail(conn, ref, zone));
      },
      [this, generation](DbResult<SharedKeyDetail> result) {
        if (generation != m_generation) return;  // the user moved on to another key
        if (!result.ok()) {
          m_header->setText(tr("<b>%1</b> · could not load: %2")
                                .arg(m_ref.key.toHtmlEscaped(), result.error.message.toHtmlEscaped()));
          emit loadFailed(result.error);
          return;
        }
        m_stale = false;
        m_loadedAt = m_session->serverNow();
        apply(*result.value, m_focusGeneration);
        emit detailLoaded();
      });
}

void KeyDetailWidget::apply(SharedKeyDetail shown, int generation) {
  // A load that began before the zone changed is shown in the zone chosen since.
  m_detail = explainedInZone(std::move(shown), TimeZoneSetting::instance().coreZone());
  m_response->setDetail(m_detail, generation);
  m_generations->setDetail(m_detail);
  m_events->setDetail(m_detail);
  const KeyDetail& detail = *m_detail;
  m_generationTable->resizeColumnsToContents();
  if (!detail.ref.isValid()) return;
  const int executions = detail.executions();
  const explain::Generation* live = detail.live();
  // The service too: services sharing a store may each hold this key in this scope.
  QString text = u"<b>"_s % detail.ref.key.toHtmlEscaped() % u"</b> · "_s % detail.ref.tenant.toHtmlEscaped() %
                 u" "_s % detail.ref.endpoint.toHtmlEscaped() % u" · "_s %
                 tr("service %1").arg(detail.ref.service.toHtmlEscaped());
  if (executions > 1)
    text += u" · <b style='color:%1'>"_s.arg(outcomeStyle(trace::Outcome::ExecutedAfterExpiry).color.name()) %
            tr("executed %1 times").arg(executions) % u"</b>"_s;
  else
    text += u" · "_s % tr("executed %n time(s)", nullptr, executions);
  text += detail.unansweredNote();
  text += amountText(detail).toHtmlEscaped();
  text += crossKeyText(detail);
  if (live && m_stale) {
    // Read before the store went away: the relative expiry would keep counting on old data.
    const QDateTime expires = toDateTime(live->expiresAt);
    text += u" · "_s % (expires < m_loadedAt ? tr("expired %1") : tr("expires %1")).arg(formatAbsolute(expires));
  } else if (live) {
    const QDateTime expires = toDateTime(live->expiresAt);
    text += u" · "_s % formatExpiry(expires, detail.serverNow()) % u" ("_s % formatAbsolute(expires) % u")"_s;
  } else if (!detail.generations().empty()) {
    text += u" · "_s % tr("no live generation (archived only)");
  } else if (!detail.events().empty()) {
    // A request held as another key's duplicate stores no generation, only its trace row.
    text += u" · "_s % tr("no generation stored, only its trace");
  } else {
    text += u" · "_s % tr("no such key");
  }
  if (m_stale) text = u"<b style='color:#b26a00'>"_s % formatStaleNote(m_loadedAt).toHtmlEscaped() % u"</b> · "_s % text;
  m_header->setText(text);
}

}  // namespace idem::ui
