"""The campaign's verdict: what the clients saw, held against what the database holds.

- duplicates: keys with more than one execution (charges in the ledger, or a generation past
  the first, which the campaign's policy — a 1 h TTL — never allows), plus keys whose answers
  carried two different payment ids. Behind proxies whose tier says `on_takeover: execute`, a
  key charged again after its lease was taken over (its holder died or lost the store for a whole
  lease) is counted apart, as `reexecuted_after_takeover`, when every extra charge has a
  `lease_takeover` of its own in the trace: what that setting allows (docs/proxy.md). Under the
  proxy's default (`outcome_unknown`) any second charge is a duplicate.
- outcome_unknown (behind proxies): keys stored as "outcome unknown" — a retry that took over a
  dead proxy's key under the default, or an upstream exchange that broke — and how many of them
  the service had in fact charged (the others the caller may safely pay again).
- lost_acknowledged: payments a client saw succeed whose key or ledger row is not in the store,
  or is there with another payment id.
- unexpected_5xx: answers 500–599 other than 503 (and, behind proxies, other than the stored
  502 "outcome unknown").
- max_unavailable_s: the longest stretch in which no client got a payment answered (2xx)."""
import bisect
import json


class StoreLedger:
    """serve's payments: one idem_demo.ledger row per execution, in the key's own transaction."""

    def rows(self, node, tenant):
        rows = node.psql("SELECT idem_key, id, generation FROM idem_demo.ledger "
                         f"WHERE tenant = '{tenant}' AND endpoint = 'POST /v1/payments'")
        by_key = {}
        for key, pid, gen in rows:
            by_key.setdefault(key, []).append((pid, int(gen or 0)))
        return by_key

    def plant(self, node, tenant, lost_key, doubled_key):
        node.psql(f"DELETE FROM idem_demo.ledger WHERE tenant = '{tenant}' AND idem_key = '{lost_key}'")
        node.psql("INSERT INTO idem_demo.ledger (id, kind, tenant, endpoint, idem_key, generation, status, payload) "
                  f"SELECT id || '_planted', kind, tenant, endpoint, idem_key, generation, status, payload "
                  f"FROM idem_demo.ledger WHERE tenant = '{tenant}' AND idem_key = '{doubled_key}'")


class UpstreamLedger:
    """The charges the service behind the proxies made, from its own executions file.
    resends_after_takeover: the tier says `on_takeover: execute` (a taken-over key is sent again)."""

    def __init__(self, path, resends_after_takeover):
        self.path, self.resends_after_takeover = path, resends_after_takeover

    def rows(self, node, tenant):
        by_key = {}
        with open(self.path) as f:
            for line in f:
                charge = json.loads(line)
                by_key.setdefault(charge["key"], []).append((charge["id"], 1))
        return by_key

    def plant(self, node, tenant, lost_key, doubled_key):
        with open(self.path) as f:
            charges = [json.loads(line) for line in f]
        kept = [c for c in charges if c["key"] != lost_key]
        kept += [{**c, "id": c["id"] + "_planted"} for c in charges if c["key"] == doubled_key]
        with open(self.path, "w") as f:
            f.writelines(json.dumps(c) + "\n" for c in kept)


def key_rows(node, tenant):
    rows = node.psql("SELECT idem_key, generation, state, coalesce(resource_ref, '') FROM idem.keys "
                     f"WHERE tenant = '{tenant}' AND endpoint = 'POST /v1/payments'")
    return {key: (int(gen), state, ref) for key, gen, state, ref in rows}


def takeovers(node, tenant):
    """Per key, how many times the trace says its lease was taken over (written by the claim
    statement that took it, so a killed process cannot lose it)."""
    rows = node.psql("SELECT idem_key, sum(repeats) FROM idem.events "
                     f"WHERE tenant = '{tenant}' AND outcome = 'lease_takeover' GROUP BY idem_key")
    return {key: int(n) for key, n in rows}


def unknown_outcomes(node, tenant):
    """Keys whose answer the store holds as "outcome unknown" (the proxy could not tell whether the
    service ran the request: a taken-over key under `on_takeover: outcome_unknown`, a broken upstream)."""
    return {row[0] for row in node.psql("SELECT DISTINCT idem_key FROM idem.events "
                                        f"WHERE tenant = '{tenant}' AND outcome = 'outcome_unknown'")}


def archived_keys(node, tenant):
    return {row[0] for row in node.psql(f"SELECT idem_key FROM idem.key_archive WHERE tenant = '{tenant}'")}


def max_gap(times):
    times = sorted(times)
    return max((b - a for a, b in zip(times, times[1:])), default=0.0)


def stretches_after_faults(injected, ops):
    """For each injected fault, the longest stretch without a 2xx that begins between its start
    and the next fault's (10 s after its end at most); a stretch that runs past that window is
    counted to its end, the first 2xx after it. None when no 2xx ever came after the fault."""
    successes = sorted(a.end for op in ops for a in op.attempts if a.status is not None and 200 <= a.status < 300)
    stretches = []
    for f, after in zip(injected, injected[1:] + [None]):
        until = min(f["end"] + 10, after["start"]) if after else f["end"] + 10
        first, last = bisect.bisect_left(successes, f["start"]), bisect.bisect_right(successes, until)
        points = [f["start"]] + successes[first:last + 1]  # + the first 2xx after the window, if any
        stretches.append(max_gap(points) if len(points) > 1 else None)
    return stretches


def recovery_by_kind(injected, stretches):
    """Per fault kind: how many came, the p50 and max of their stretches without a 2xx (the time
    the endpoints answered 503 or nothing), and how many were never followed by a 2xx."""
    by_kind = {}
    for f, s in zip(injected, stretches):
        by_kind.setdefault(f["kind"], []).append(s)
    out = {}
    for kind, values in by_kind.items():
        seen = sorted(v for v in values if v is not None)
        out[kind] = {"count": len(values),
                     "p50_s": round(seen[(len(seen) - 1) // 2], 1) if seen else None,
                     "max_s": round(seen[-1], 1) if seen else None,
                     "never_recovered": len(values) - len(seen)}
    return out


def verdict(ops, node, tenant, ledger):
    """The figures and, for the text report, each finding named; and the keys no finding names
    (where the proof of the checks plants its faults)."""
    charges, keys, archived = ledger.rows(node, tenant), key_rows(node, tenant), archived_keys(node, tenant)
    behind_proxies = isinstance(ledger, UpstreamLedger)
    taken_over = takeovers(node, tenant) if behind_proxies and ledger.resends_after_takeover else {}
    findings, clean = [], []
    duplicates = lost = after_takeover = 0
    for op in ops:
        rows = charges.get(op.key, [])
        key = keys.get(op.key)
        later_generation = (key and key[0] > 1) or op.key in archived
        twice = len(rows) > 1 or later_generation or len(op.ids_seen) > 1
        explained = twice and not later_generation and len(op.ids_seen) <= 1 \
            and len(rows) - 1 <= taken_over.get(op.key, 0)
        if explained:
            after_takeover += 1
            findings.append(f"re-executed after a lease takeover: key {op.key}: charges {rows}, "
                            f"takeovers {taken_over[op.key]}, key row {key}")
        elif twice:
            duplicates += 1
            findings.append(f"duplicate: key {op.key}: ledger {rows}, key row {key}, ids seen {sorted(op.ids_seen)}")
        if op.acknowledged:
            held = key is not None and key[1] == "done" and key[2] == op.acknowledged_id
            in_ledger = [pid for pid, _ in rows] == [op.acknowledged_id] or \
                (explained and op.acknowledged_id in [pid for pid, _ in rows])
            if not (held and in_ledger) and not (twice and not explained):
                lost += 1
                findings.append(f"lost acknowledged: key {op.key} answered {op.acknowledged_id}: "
                                f"ledger {rows}, key row {key}")
            elif not twice:
                clean.append(op)
    attempts = [a for op in ops for a in op.attempts]
    # Behind proxies a 502 "outcome unknown" is an honest answer, counted below, not a failure.
    bad = [a for a in attempts if a.status is not None and 500 <= a.status < 600 and a.status != 503
           and not (behind_proxies and a.status == 502 and a.problem == "upstream-outcome-unknown")]
    for a in bad[:20]:
        findings.append(f"unexpected {a.status} from {a.endpoint} at {a.start:.3f}")
    gap = max_gap([a.end for a in attempts if a.status is not None and 200 <= a.status < 300])
    figures = {"duplicates": duplicates, "lost_acknowledged": lost, "unexpected_5xx": len(bad),
               "max_unavailable_s": round(gap, 1)}
    if behind_proxies:
        figures["reexecuted_after_takeover"] = after_takeover
        unknown = unknown_outcomes(node, tenant)
        figures["outcome_unknown"] = {"keys": len(unknown), "charged": sum(1 for k in unknown if charges.get(k))}
    return figures, findings, clean


def checks_see_planted_faults(ops, node, tenant, ledger):
    """Proof that the checks can fail: after the verdict, one acknowledged payment's charge is
    deleted and another acknowledged payment gets a second charge (both among the keys no finding
    names, so neither plant hides behind a finding already there); the verdict must then count
    exactly one more lost key and one more duplicate. Returns an error text, or None."""
    before, _, clean = verdict(ops, node, tenant, ledger)
    if len(clean) < 2:
        return "fewer than two acknowledged payments without a finding: nothing to plant"
    ledger.plant(node, tenant, clean[0].key, clean[1].key)
    after, _, _ = verdict(ops, node, tenant, ledger)
    if after["lost_acknowledged"] != before["lost_acknowledged"] + 1 or after["duplicates"] != before["duplicates"] + 1:
        return f"the checks missed planted faults: before {before}, after {after}"
    return None


def judge(ops, store, tenant, ledger, injected, counts, seconds):
    """The whole verdict of a campaign: the figures, each fault's stretch without a 2xx, and the
    findings — including the proof that the checks see planted faults (run last: it plants
    them). Returns (result, stretches, findings)."""
    figures, findings, _ = verdict(ops, store, tenant, ledger)
    stretches = stretches_after_faults(injected, ops)
    result = {"seconds": round(seconds, 1), "operations": len(ops),
              "attempts": sum(len(op.attempts) for op in ops), "faults": counts, **figures,
              "recovery_s": recovery_by_kind(injected, stretches)}
    return result, stretches, findings


def proves_blind_spots(ops, store, tenant, ledger, findings):
    """Appends to findings when the checks miss planted faults; True when they do."""
    blind = checks_see_planted_faults(ops, store, tenant, ledger)
    if blind:
        findings.append(blind)
    return bool(blind)
