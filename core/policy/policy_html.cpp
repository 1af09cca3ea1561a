// The published policy as a page for the people who write API clients: which routes need a
// key, for how long a key is honoured, and what each answer means and asks of the client.
// Self-contained (inline CSS, no scripts or external assets) so it works behind any proxy.
#include <algorithm>

#include "core/http/problemcatalogue.h"
#include "core/policy/policy.h"
#include "core/policy/route_template.h"
#include "core/text/humanduration.h"

namespace idem::policy {
namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string codeList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + ("<code>" + escape(item) + "</code>");
  return out;
}

constexpr std::string_view kStyle = R"css(
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1f23;max-width:60rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
code{font:13px ui-monospace,Menlo,Consolas,monospace;background:#f3f4f6;padding:.05rem .3rem;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border:1px solid #ddd}
th{background:#f7f7f8;width:14rem}.tier h3{margin-bottom:.3rem}.muted{color:#5f6368}
dt{font-weight:600;margin-top:.6rem}dd{margin-left:1.2rem}
)css";

std::string expiryText(const Tier& t) {
  if (t.onExpired == OnExpired::Reject)
    return "A retry with the same key after that is refused with <b>422</b>: check whether the original request "
           "succeeded, then use a new key.";
  return "A request with the same key after that is <b>processed as a new request</b> and may perform the operation "
         "again: do not retry with a key older than this.";
}

std::string conflictText(const Tier& t) {
  if (t.onConflict.wait)
    return "The server waits up to " + escape(text::humanDuration(t.onConflict.waitFor)) +
           " for the original to finish and then answers with its response; if it is still running after that, "
           "<b>409</b> with <code>Retry-After</code>.";
  return "<b>409</b> with <code>Retry-After</code>: wait that many seconds and retry with the same key.";
}

std::string fingerprintText(const fp::Spec& spec) {
  std::string out;
  switch (spec.mode) {
    case fp::Mode::None:
      out = "Only the key is compared; the body is not checked.";
      break;
    case fp::Mode::Body:
      out = "The body must be byte-for-byte the same.";
      break;
    case fp::Mode::Json:
      out = "The JSON body must be the same; whitespace and member order do not matter.";
      break;
    case fp::Mode::Fields:
      out = "These body fields must be the same: " + codeList(spec.fields) + ".";
      break;
  }
  if (!spec.headers.empty()) out += " So must these headers: " + codeList(spec.headers) + ".";
  return out + " A different request under a used key gets <b>422</b>.";
}

std::string cacheText(const Tier& t) {
  if (t.cache == CacheRule::SuccessOnly)
    return "Only successful (2xx) responses are kept; after an error the same key may be retried.";
  return "Every response is kept once processing started, errors (5xx) included: a retry gets the same answer. "
         "A request refused before processing (validation, authentication, rate limit) is not kept, so the key can "
         "be retried after fixing it.";
}

// Where support reads a charge's amount in the stored response (its letters to customers name it).
std::string amountText(const Tier& t) {
  auto one = [](const AmountSpec& a) {
    std::string out = "<code>" + escape(a.value) + "</code> (" + (a.minorUnits ? "minor units, e.g. cents" : "major units") + ")";
    if (!a.currency.empty()) out += ", currency <code>" + escape(a.currency) + "</code>";
    if (!a.defaultCurrency.empty()) out += (a.currency.empty() ? ", currency " : ", else ") + escape(a.defaultCurrency);
    return out;
  };
  if (t.amount.all) return one(*t.amount.all);
  std::string out;
  for (const auto& [route, spec] : t.amount.byRoute) out += (out.empty() ? "" : "<br>") + ("<code>" + escape(route) + "</code>: " + one(spec));
  return out;
}

// What a client must send, by the tier's rollout (published as "rollout" in the JSON).
std::string keyText(const Tier& t) {
  switch (t.rollout) {
    case Rollout::Required:
      return "<b>Required</b>: a request without one is refused with 400 (rollout <code>required</code>).";
    case Rollout::WhenPresent:
      return "Honoured when sent: a request without one is processed without duplicate protection (rollout "
             "<code>when-present</code>).";
    case Rollout::Observe:
      return "<b>Not enforced yet</b> (rollout <code>observe</code>): every request is processed as sent, even a "
             "retry of a key already answered; send keys now, they are honoured once the rollout is "
             "<code>required</code>.";
  }
  return {};
}

// What a new key whose request repeats another key's answers (published as "cross_key").
std::string crossKeyText(const Tier& t) {
  const std::string window = escape(text::humanDuration(t.crossKey.window));
  const std::string same = "The same request (see \"Same request?\") under a <em>new</em> key within " + window +
                           " of an earlier one";
  switch (t.crossKey.mode) {
    case CrossKeyMode::Off: return {};
    case CrossKeyMode::Observe: return same + " is processed, and flagged for review.";
    case CrossKeyMode::Hold:
      return same + " is answered <b>409</b> (<code>#suspected-duplicate</code>) naming the earlier key, and nothing "
                    "is processed: a retry should reuse its key. To make a second, identical request on purpose, "
                    "resend it with <code>" + std::string(kDuplicateConfirmedHeader) + ": ?1</code>.";
    case CrossKeyMode::Reject:
      return same + " is refused with <b>409</b> (<code>#duplicate-rejected</code>); nothing is processed.";
  }
  return {};
}

// `ttl` is the TTL as the published JSON writes it, so the page and the JSON agree.
std::string takeoverText(const Tier& t, OnTakeover rule) {
  const std::string after = "After " + escape(text::humanDuration(t.lease)) + " a retry with the same key ";
  if (rule == OnTakeover::OutcomeUnknown)
    return after + "gets <b>502</b> <code>upstream-outcome-unknown</code>, stored for the key: the request may have "
                   "been carried out, so it is not run again. Check the operation's outcome before using a new key.";
  return after + "runs the request again.";
}

std::string tierSection(const Tier& t, const std::string& ttl, OnTakeover frontTakeover) {
  std::string s = "<section class=\"tier\"><h3>" + escape(t.name) + "</h3><table>\n";
  auto row = [&s](std::string_view head, const std::string& html) {
    s += "<tr><th>" + std::string(head) + "</th><td>" + html + "</td></tr>\n";
  };
  row("Routes", codeList(t.routes));
  row("Idempotency-Key", keyText(t));
  row("Key honoured for", "<b>" + escape(text::humanDuration(t.ttl)) + "</b> (<code>" + escape(ttl) +
                              "</code>) from the first request. " + expiryText(t));
  row("Retry while the first is running", conflictText(t));
  row("If the server stops mid-request",
      takeoverText(t, t.onTakeover == OnTakeover::FrontDecides ? frontTakeover : t.onTakeover));
  row("Same request?", fingerprintText(t.fingerprint));
  if (t.crossKey.on()) row("Same request, new key", crossKeyText(t));
  row("Stored responses", cacheText(t));
  row("Replayed headers", codeList(t.replayHeaders.empty() ? defaultReplayHeaders() : t.replayHeaders));
  if (!t.amount.empty()) row("Amount charged", amountText(t));
  return s + "</table></section>\n";
}

constexpr std::string_view kAnswers = R"html(
<h2>Answers and what to do</h2>
<dl>
<dt>2xx (or any stored status) with <code>Idempotent-Replayed: true</code></dt>
<dd>The request had already been processed under this key; this is the stored response, not a new execution.
Treat it as the result of your original request.</dd>
<dt>400 Bad Request</dt>
<dd>The key is missing or malformed (empty, longer than 255 characters, or containing spaces, quotes, backslashes,
control or non-ASCII characters), or the body is not JSON on a route that compares JSON bodies. Nothing was
processed. Fix the request; do not retry it unchanged.</dd>
<dt>409 Conflict</dt>
<dd>The first request with this key is still being processed. Nothing new was processed. Wait the seconds in
<code>Retry-After</code> and retry with the <em>same</em> key to get its result. On a tier that checks for
duplicates across keys, a 409 of type <code>#suspected-duplicate</code> or <code>#duplicate-rejected</code> means
the same request already ran under another key, named in the detail (see "Same request, new key").</dd>
<dt>422 Unprocessable Content</dt>
<dd>Either the key was already used for a different request (see "Same request?" above), or the key expired in a
tier that refuses expired keys. Nothing was processed. Do not retry with this key: check whether the original
succeeded, then send a new request with a new key.</dd>
<dt>503 Service Unavailable</dt>
<dd>The server could not check the key, so it processed nothing. Retry after <code>Retry-After</code> with the same
key.</dd>
</dl>
<h2>Headers</h2>
<dl>
<dt><code>Idempotency-Expires</code></dt>
<dd>On every response to a keyed request: an HTTP date (e.g. <code>Sun, 06 Nov 1994 08:49:37 GMT</code>) until
which the key is honoured. A retry after it is no longer recognised as a retry.</dd>
<dt><code>Idempotent-Replayed: true</code></dt>
<dd>On a stored response replayed for a retry. Absent on the response of the execution itself.</dd>
</dl>
)html";

// One entry per problem any front answers: each problem's `type` is docs_url#slug, so every
// link a client receives lands on its explanation here.
std::string problemTypes() {
  std::string s =
      "<h2 id=\"problems\">Problem types</h2>\n<p>Every error is <code>application/problem+json</code>; its "
      "<code>type</code> is this page's address with one of these anchors.</p>\n<dl>\n";
  for (const http::ProblemInfo& p : http::kProblems) {
    const std::string slug(p.slug);
    s.append("<dt id=\"").append(slug).append("\"><code>").append(slug).append("</code> ");
    if (p.status) s.append(std::to_string(p.status)).append(" ");
    s.append(escape(p.title)).append("</dt>\n<dd>").append(escape(p.meaning)).append("</dd>\n");
  }
  return s + "</dl>\n";
}

}  // namespace

std::string publishedHtml(const Policy& policy, std::string_view service, OnTakeover frontTakeover) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Idempotency policy</title>\n<style>" +
      std::string(kStyle) +
      "</style></head><body>\n<h1>Idempotency policy</h1>\n<p class=\"muted\">Published at <a href=\"" +
      escape(policy.docsUrl) + "\">" + escape(policy.docsUrl) +
      "</a>. The same policy is served as JSON to clients that send <code>Accept: application/json</code>.</p>\n";
  if (!service.empty())
    page += "<p>Service <code>" + escape(std::string(service)) +
            "</code>: keys sent to this service are its own; another service never answers them.</p>\n";

  page +=
      "<h2>Sending a key</h2>\n<p>Send a unique key with each operation in the <code>Idempotency-Key</code> header, "
      "for example <code>Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\"</code> (quoted or bare: both "
      "name the same key). Use 1 to 255 visible ASCII characters; a UUID is a good choice. To retry, send the "
      "<em>same</em> request with the <em>same</em> key; for a new operation, use a new key.</p>\n<p>A key belongs "
      "to one method and route";
  if (!policy.tenantHeader.empty())
    page += " and one account (the <code>" + escape(policy.tenantHeader) + "</code> header)";
  page += ": the same key elsewhere is a different key.</p>\n";
  const bool templates = std::any_of(policy.tiers.begin(), policy.tiers.end(), [](const Tier& t) {
    return std::any_of(t.routes.begin(), t.routes.end(), [](const std::string& r) { return isRouteTemplate(r); });
  });
  if (templates)
    page +=
        "<p>A route written with <code>{name}</code> stands for any one path segment there (an id), and "
        "<code>{name*}</code> at its end for one or more. Such a route is one route for keys: the same key on "
        "another path of it (another order's id) is a different request and is refused with <b>422</b>, not "
        "processed as a second operation.</p>\n";
  page += "<h2>Routes and tiers</h2>\n";
  const nlohmann::json published = publishedJson(policy);
  for (std::size_t i = 0; i < policy.tiers.size(); ++i)
    page += tierSection(policy.tiers[i], published.at("tiers").at(i).at("ttl").get<std::string>(), frontTakeover);
  page += kAnswers;
  page += problemTypes();
  return page + "</body></html>\n";
}

}  // namespace idem::policy
