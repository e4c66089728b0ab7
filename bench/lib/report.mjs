/**
 * The Markdown report: one table of every scenario × server (throughput, latency, errors, memory
 * and the ratio to the floor of the same run), then the issue's targets, each met or not.
 */
import { mib } from './proc.mjs';

function num(value, digits) {
  return value === null || value === undefined || Number.isNaN(value) ? '' : value.toFixed(digits);
}

function rate(value) {
  if (value === null || value === undefined) return '';
  return value >= 100 ? Math.round(value).toLocaleString('en') : value.toFixed(2);
}

function ms(value) {
  if (value === null || value === undefined) return '';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return Math.round(value).toLocaleString('en');
}

function cpu(seconds) {
  if (!Number.isFinite(seconds)) return '';
  const value = seconds * 1000;
  return value < 10
    ? value.toFixed(3)
    : value < 1000
      ? value.toFixed(1)
      : Math.round(value).toLocaleString('en');
}

function memory({ idle, peak }) {
  if (!peak) return '';
  return idle ? `${num(mib(idle), 0)} → ${num(mib(peak), 0)}` : num(mib(peak), 0);
}

/** Throughput of `result` over the floor's in the same scenario. */
export function ratioToFloor(results, result) {
  const floor = results.find((r) => r.scenario === result.scenario && r.server === 'floor');
  if (floor?.state !== 'ok' || !result.rps || !floor.rps) return null;
  return result.rps / floor.rps;
}

export function resultTable(results, scenarios, servers) {
  const lines = [
    '| scenario | server | req/s | p50 ms | p99 ms | errors | CPU ms/req | RSS idle → peak (MiB) | × floor | result |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const scenario of scenarios) {
    for (const server of servers) {
      const r = results.find((x) => x.scenario === scenario.id && x.server === server.key);
      if (!r) continue;
      const measured = r.rps !== null && r.rps !== undefined;
      const ratio = ratioToFloor(results, r);
      const verdict = r.state === 'ok' ? 'ok' : r.state;
      lines.push(
        `| ${scenario.id}. ${scenario.title} | ${server.label} | ${measured ? rate(r.rps) : '—'} | ` +
          `${measured ? ms(r.p50) : '—'} | ${measured ? ms(r.p99) : '—'} | ` +
          `${measured ? r.errors : '—'} | ${cpu(r.cpu)} | ${memory(r)} | ${ratio === null ? '' : ratio.toFixed(2)} | ` +
          `${verdict}${r.reason ? `: ${r.reason}` : ''}${r.note ? ` (${r.note})` : ''} |`,
      );
    }
  }
  return lines.join('\n');
}

function find(results, scenario, server) {
  return results.find((r) => r.scenario === scenario && r.server === server);
}

/** The CPU each request cost tablegate next to the floor: steadier than req/s on a busy machine. */
function cpuRatio(tg, floor) {
  if (!tg.cpu || !floor.cpu) return '';
  return ` (CPU per request ${(tg.cpu / floor.cpu).toFixed(2)} × the floor's)`;
}

function usable(r) {
  return r && r.state === 'ok' && r.rps;
}

/** The issue's targets, each as one line: met, NOT met, or why it could not be judged. */
export function targetLines(results) {
  const lines = [];
  const say = (name, ok, detail) =>
    lines.push(`- ${name}: ${ok === null ? 'not judged' : ok ? 'met' : '**NOT met**'} — ${detail}`);
  /** The "≥ 0.85 × floor" throughput target of one scenario. */
  const floorTarget = (id) => {
    const tg = find(results, id, 'tablegate');
    const floor = find(results, id, 'floor');
    if (!usable(tg) || !usable(floor)) {
      say(
        `(${id}) ≥ 0.85 × floor`,
        null,
        `tablegate ${tg?.state ?? 'not run'}, floor ${floor?.state ?? 'not run'}`,
      );
    } else {
      const ratio = tg.rps / floor.rps;
      say(
        `(${id}) ≥ 0.85 × floor`,
        ratio >= 0.85,
        `${ratio.toFixed(2)} × floor${cpuRatio(tg, floor)}`,
      );
    }
  };
  for (const id of ['a', 'b', 'c']) {
    floorTarget(id);
    const tg = find(results, id, 'tablegate');
    const others = ['xmysql', 'mysql-rest'].map((k) => find(results, id, k)).filter(usable);
    if (!usable(tg) || others.length === 0) {
      say(`(${id}) ≥ 2 × the faster of xmysql and mysql-rest`, null, 'not both measured');
    } else {
      const best = others.reduce((a, b) => (b.rps > a.rps ? b : a));
      const ratio = tg.rps / best.rps;
      say(
        `(${id}) ≥ 2 × the faster of xmysql and mysql-rest`,
        ratio >= 2,
        `${ratio.toFixed(2)} × ${best.server}`,
      );
    }
  }
  {
    const tg = find(results, 'd', 'tablegate');
    const floor = find(results, 'd', 'floor');
    if (!usable(tg) || !usable(floor)) {
      say(
        '(d) time ≤ 1.2 × floor',
        null,
        `tablegate ${tg?.state ?? 'not run'}, floor ${floor?.state ?? 'not run'}`,
      );
    } else {
      const ratio = tg.p50 / floor.p50;
      say(
        '(d) time ≤ 1.2 × floor',
        ratio <= 1.2,
        `median ${ms(tg.p50)} ms vs ${ms(floor.p50)} ms: ${ratio.toFixed(2)} ×`,
      );
    }
    if (!tg?.peak || !tg?.idle) {
      say('(d) peak RSS ≤ idle + 64 MiB', null, 'not measured');
    } else {
      const growth = mib(tg.peak - tg.idle);
      say(
        '(d) peak RSS ≤ idle + 64 MiB',
        growth <= 64,
        `+${growth.toFixed(0)} MiB (${memory(tg)} MiB)`,
      );
    }
  }
  for (const id of ['e', 'f']) floorTarget(id);
  // Issue 14: a --policy costs a point read and a page at most 5 %.
  for (const id of ['a', 'b']) {
    const tg = find(results, id, 'tablegate');
    const policy = find(results, id, 'tablegate-policy');
    const name = `(${id}) with a policy ≥ 0.95 × without`;
    if (!usable(tg) || !usable(policy)) {
      say(
        name,
        null,
        `tablegate ${tg?.state ?? 'not run'}, with a policy ${policy?.state ?? 'not run'}`,
      );
    } else {
      const ratio = policy.rps / tg.rps;
      say(
        name,
        ratio >= 0.95,
        `${ratio.toFixed(3)} × (${num(policy.rps, 0)} vs ${num(tg.rps, 0)} req/s)${cpuRatio(policy, tg).replace("the floor's", 'without')}`,
      );
    }
  }
  {
    const tg = find(results, 'g', 'tablegate');
    if (tg?.state !== 'ok' || !tg.peak) {
      say('(g) peak RSS < 150 MiB', null, `tablegate ${tg?.state ?? 'not run'}`);
    } else {
      say('(g) peak RSS < 150 MiB', mib(tg.peak) < 150, `${num(mib(tg.peak), 0)} MiB`);
    }
  }
  return lines.join('\n');
}
