// The case an agent works on: the search that finds a customer's key, landing on it, and the
// export of its letter, which must be about that key and no other.
#include <QMenu>
#include <QTableView>
#include <set>
#include <tuple>

#include "ui/cases/casefolder.h"
#include "ui/common/dbsession.h"
#include "ui/common/timefmt.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

QString KeysWorkspace::exportBlockedReason() const {
  if (!m_caseProblem.isEmpty()) return m_caseProblem;
  const QString typed = m_typedSearch.trimmed();
  if (!typed.isEmpty() && typed != m_searchText)
    return tr("The search box reads “%1”, which was not searched: press Enter to open it.").arg(typed);
  const KeyRef ref = m_detail->key();
  if (!ref.isValid()) return tr("Open a key first: Ctrl+K, paste the customer's id, Enter.");
  if (m_storeLost) return tr("The export waits for fresh data: what is shown is %1.").arg(formatStaleNote(m_keys->loadedAt()));
  if (m_detail->isStale()) return tr("The export waits for the key to be read again now that the store is back.");
  if (m_detail->detail().ref != ref) return tr("The key's detail is still loading.");
  return {};
}

void KeysWorkspace::updateExportable() {
  const QString reason = exportBlockedReason();
  m_detail->explainView()->setExportBlocked(reason);
  if (m_lastBlocked == reason) return;
  m_lastBlocked = reason;
  emit exportBlockedChanged(reason);
}

void KeysWorkspace::setTypedSearch(const QString& text) {
  m_typedSearch = text;
  updateExportable();
}

QString KeysWorkspace::letterMismatch(explain::Audience audience) const {
  // The letter is written from what the Explain tab holds: it must be the open case's key, and
  // a case found by a resource id must find that id in its words.
  const KeyRef& letter = m_detail->explainView()->subject();
  const KeyRef& open = m_detail->key();
  if (letter != open)
    return tr("the letter is about key %1, not the case's key %2").arg(letter.key, open.key);
  if (!m_foundByResource.isEmpty() && !m_detail->explainView()->markdown(audience).contains(m_foundByResource))
    return tr("the letter does not name %1, the id this case was found by").arg(m_foundByResource);
  return {};
}

void KeysWorkspace::search(const QString& text) {
  const QString needle = text.trimmed();
  if (needle.isEmpty()) return;
  const quint64 generation = ++m_searchGeneration;
  m_searchText = needle;
  m_typedSearch.clear();
  m_caseProblem = tr("Searching for “%1”: the export waits for the answer.").arg(needle);
  updateExportable();
  emit message(tr("Searching for “%1”…").arg(needle));
  m_browse->submit<std::vector<KeyHit>>(
      this, [needle](pg::Connection& conn) { return searchKeys(conn, needle); },
      [this, generation, needle](DbResult<std::vector<KeyHit>> result) {
        if (generation != m_searchGeneration) return;
        if (!result.ok()) {
          m_caseProblem = tr("The search for “%1” failed: %2").arg(needle, result.error.message);
          updateExportable();
          emit warning(m_caseProblem);
          return;
        }
        showHits(needle, *result.value);
      });
}

void KeysWorkspace::showHits(const QString& text, const std::vector<KeyHit>& hits) {
  if (hits.empty()) {
    // Nothing of the previous case may stay on screen to be exported as this one's.
    const QString none = tr("No key, resource id or key prefix matches “%1”.").arg(text);
    m_caseProblem = none % u" "_s % tr("There is nothing to export for it.");
    m_foundByResource.clear();
    m_pendingSelect = {};
    m_detail->clear(none % u" "_s % tr("Check the id with the customer."));
    restoreListHeight();
    KeyFilter f;
    f.sort = m_keys->filter().sort;
    f.descending = m_keys->filter().descending;
    f.key = text;  // the table answers the search too: no row
    applySearchFilter(f, text);
    updateExportable();
    emit warning(none);
    return;
  }
  // A key is its scope and its service: two services' k1 are two keys to choose from.
  std::set<std::tuple<QString, QString, QString, QString>> keys;
  for (const auto& h : hits) keys.insert({h.tenant, h.endpoint, h.key, h.service});
  if (keys.size() == 1) {
    landOn(hits.front());
    emit landed(hits.front(), text);
    emit message(tr("Found %1 (%2)").arg(hits.front().key, hits.front().matchedBy));
    return;
  }
  auto* menu = new QMenu(this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  for (const auto& h : hits) {
    QString label = h.key % u"   "_s % (h.service == u"default"_s ? QString() : h.service % u": "_s) % h.tenant %
                    u" "_s % h.endpoint % u"   gen "_s % QString::number(h.generation);
    if (h.archived) label += u" (archived)"_s;
    if (!h.resourceRef.isEmpty()) label += u"   "_s % h.resourceRef;
    menu->addAction(label, this, [this, h, text] {
      landOn(h);
      emit landed(h, text);
    });
  }
  menu->popup(m_table->mapToGlobal(QPoint(0, 0)));
  m_caseProblem = tr("“%1” matches %n keys: choose one first.", nullptr, static_cast<int>(hits.size())).arg(text);
  updateExportable();
  emit message(tr("%n matches for “%1”: choose one", nullptr, static_cast<int>(hits.size())).arg(text));
}

void KeysWorkspace::landOn(const KeyHit& hit) {
  KeyFilter f;
  f.sort = m_keys->filter().sort;
  f.descending = m_keys->filter().descending;
  f.state = hit.archived ? KeyState::Archived : KeyState::All;
  f.tenant = hit.tenant;
  f.endpoint = hit.endpoint;
  f.key = hit.key;
  f.service = hit.service;
  m_pendingSelect = {hit.tenant, hit.endpoint, hit.key, hit.service};
  m_caseProblem.clear();
  applySearchFilter(f, m_searchText.isEmpty() ? hit.key : m_searchText);
  m_landing = true;
  m_foundByResource = hit.matchedBy == u"key"_s ? QString() : hit.resourceRef;
  // A key found by a resource id opens on that id's generation; a key found by itself, on the live one.
  m_detail->showKey(m_pendingSelect, hit.matchedBy == u"key"_s ? 0 : hit.generation);
  updateExportable();
}

QString KeysWorkspace::exportToCaseFolder(explain::Audience audience) {
  const KeyRef ref = m_detail->key();
  if (const QString reason = exportBlockedReason(); !reason.isEmpty()) {
    emit warning(tr("Not exported: %1").arg(reason));
    return {};
  }
  if (const QString mismatch = letterMismatch(audience); !mismatch.isEmpty()) {
    emit warning(tr("Not exported: %1.").arg(mismatch));
    return {};
  }
  const bool forCustomer = audience == explain::Audience::Customer;
  const QString path = m_detail->explainView()->exportToFolder(
      m_caseFolder.isEmpty() ? defaultCaseFolder() : m_caseFolder,
      caseFileName(ref.key, m_foundByResource, forCustomer ? u"customer"_s : QString(), u"pdf"_s), audience);
  if (!path.isEmpty()) emit message(tr("Exporting to %1…").arg(path));
  return path;
}

}  // namespace idem::ui
