"""The campaign's verdict: what the clients saw, held against what the database holds.

- duplicates: keys with more than one execution (ledger rows, or a generation past the first,
  which the campaign's policy — a 1 h TTL — never allows), plus keys whose answers carried two
  different payment ids.
- lost_acknowledged: payments a client saw succeed whose key or ledger row is not in the store,
  or is there with another payment id.
- unexpected_5xx: answers 500–599 other than 503.
- max_unavailable_s: the longest stretch in which no client got a payment answered (2xx)."""
import bisect


def ledger_rows(node, tenant):
    rows = node.psql("SELECT idem_key, id, generation FROM idem_demo.ledger "
                     f"WHERE tenant = '{tenant}' AND endpoint = 'POST /v1/payments'")
    by_key = {}
    for key, pid, gen in rows:
        by_key.setdefault(key, []).append((pid, int(gen or 0)))
    return by_key


def key_rows(node, tenant):
    rows = node.psql("SELECT idem_key, generation, state, coalesce(resource_ref, '') FROM idem.keys "
                     f"WHERE tenant = '{tenant}' AND endpoint = 'POST /v1/payments'")
    return {key: (int(gen), state, ref) for key, gen, state, ref in rows}


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


def verdict(ops, node, tenant):
    """The figures and, for the text report, each finding named."""
    ledger, keys, archived = ledger_rows(node, tenant), key_rows(node, tenant), archived_keys(node, tenant)
    findings = []
    duplicates = lost = 0
    for op in ops:
        rows = ledger.get(op.key, [])
        key = keys.get(op.key)
        twice = len(rows) > 1 or (key and key[0] > 1) or op.key in archived or len(op.ids_seen) > 1
        if twice:
            duplicates += 1
            findings.append(f"duplicate: key {op.key}: ledger {rows}, key row {key}, ids seen {sorted(op.ids_seen)}")
        if op.acknowledged:
            held = key is not None and key[1] == "done" and key[2] == op.acknowledged_id
            in_ledger = [pid for pid, _ in rows] == [op.acknowledged_id]
            if not (held and in_ledger) and not twice:
                lost += 1
                findings.append(f"lost acknowledged: key {op.key} answered {op.acknowledged_id}: "
                                f"ledger {rows}, key row {key}")
    attempts = [a for op in ops for a in op.attempts]
    bad = [a for a in attempts if a.status is not None and 500 <= a.status < 600 and a.status != 503]
    for a in bad[:20]:
        findings.append(f"unexpected {a.status} from {a.endpoint} at {a.start:.3f}")
    gap = max_gap([a.end for a in attempts if a.status is not None and 200 <= a.status < 300])
    return {"duplicates": duplicates, "lost_acknowledged": lost, "unexpected_5xx": len(bad),
            "max_unavailable_s": round(gap, 1)}, findings


def checks_see_planted_faults(ops, node, tenant):
    """Proof that the checks can fail: after the verdict, one acknowledged payment's ledger row is
    deleted and another acknowledged payment gets a second ledger row; the verdict must then count
    exactly one more lost key and one more duplicate. Returns an error text, or None."""
    before, _ = verdict(ops, node, tenant)
    acked = [op for op in ops if op.acknowledged]
    if len(acked) < 2:
        return "fewer than two acknowledged payments: nothing to plant"
    lost, doubled = acked[0], acked[1]
    node.psql(f"DELETE FROM idem_demo.ledger WHERE tenant = '{tenant}' AND idem_key = '{lost.key}'")
    node.psql("INSERT INTO idem_demo.ledger (id, kind, tenant, endpoint, idem_key, generation, status, payload) "
              f"SELECT id || '_planted', kind, tenant, endpoint, idem_key, generation, status, payload "
              f"FROM idem_demo.ledger WHERE tenant = '{tenant}' AND idem_key = '{doubled.key}'")
    after, _ = verdict(ops, node, tenant)
    if after["lost_acknowledged"] != before["lost_acknowledged"] + 1 or after["duplicates"] != before["duplicates"] + 1:
        return f"the checks missed planted faults: before {before}, after {after}"
    return None


def judge(ops, store, tenant, injected, counts, seconds):
    """The whole verdict of a campaign: the figures, each fault's stretch without a 2xx, and the
    findings — including the proof that the checks see planted faults (run last: it plants
    them). Returns (result, stretches, findings)."""
    figures, findings = verdict(ops, store, tenant)
    stretches = stretches_after_faults(injected, ops)
    result = {"seconds": round(seconds, 1), "operations": len(ops),
              "attempts": sum(len(op.attempts) for op in ops), "faults": counts, **figures,
              "recovery_s": recovery_by_kind(injected, stretches)}
    return result, stretches, findings


def proves_blind_spots(ops, store, tenant, findings):
    """Appends to findings when the checks miss planted faults; True when they do."""
    blind = checks_see_planted_faults(ops, store, tenant)
    if blind:
        findings.append(blind)
    return bool(blind)
