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

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Throughput of `result` over its floor's (`floors`: scenario id → floor key) in the same scenario. */
export function ratioToFloor(results, result, floors = new Map()) {
  const key = floors.get(result.scenario) ?? 'floor';
  const floor = results.find((r) => r.scenario === result.scenario && r.server === key);
  if (floor?.state !== 'ok' || !result.rps || !floor.rps) return null;
  return result.rps / floor.rps;
}

export function resultTable(results, scenarios, servers, floors = new Map()) {
  const lines = [
    '| scenario | server | req/s | p50 ms | p99 ms | errors | CPU ms/req | promoted B/req | RSS idle → peak (MiB) | × floor | result |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const scenario of scenarios) {
    for (const server of servers) {
      const r = results.find((x) => x.scenario === scenario.id && x.server === server.key);
      if (!r) continue;
      const measured = r.rps !== null && r.rps !== undefined;
      const ratio = ratioToFloor(results, r, floors);
      const verdict = r.state === 'ok' ? 'ok' : r.state;
      lines.push(
        `| ${scenario.id}. ${scenario.title} | ${server.label} | ${measured ? rate(r.rps) : '—'} | ` +
          `${measured ? ms(r.p50) : '—'} | ${measured ? ms(r.p99) : '—'} | ` +
          `${measured ? r.errors : '—'} | ${cpu(r.cpu)} | ${num(r.promoted, 0)} | ${memory(r)} | ${ratio === null ? '' : ratio.toFixed(2)} | ` +
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
export function targetLines(results, floors = new Map()) {
  const lines = [];
  const say = (name, ok, detail) =>
    lines.push(`- ${name}: ${ok === null ? 'not judged' : ok ? 'met' : '**NOT met**'} — ${detail}`);
  /** A throughput target of one scenario as a ratio to its floor. */
  const floorTarget = (id, target, server = 'tablegate') => {
    const tg = find(results, id, server);
    const floor = find(results, id, floors.get(id) ?? 'floor');
    const name = `(${id}) ≥ ${target.toFixed(2)} × floor`;
    if (!usable(tg) || !usable(floor)) {
      say(name, null, `${server} ${tg?.state ?? 'not run'}, floor ${floor?.state ?? 'not run'}`);
    } else {
      const ratio = tg.rps / floor.rps;
      say(name, ratio >= target, `${ratio.toFixed(2)} × floor${cpuRatio(tg, floor)}`);
    }
  };
  // The performance issue's targets: reads, writes and the auth mix at 0.95 × their floors.
  for (const id of ['a', 'b', 'c']) {
    floorTarget(id, 0.95);
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
        '(d) time ≤ 1.1 × floor',
        null,
        `tablegate ${tg?.state ?? 'not run'}, floor ${floor?.state ?? 'not run'}`,
      );
    } else {
      const ratio = tg.p50 / floor.p50;
      say(
        '(d) time ≤ 1.1 × floor',
        ratio <= 1.1,
        `median ${ms(tg.p50)} ms vs ${ms(floor.p50)} ms: ${ratio.toFixed(2)} ×`,
      );
    }
    if (!tg?.peak || !tg?.idle) {
      say('(d) peak RSS ≤ idle + 32 MiB', null, 'not measured');
    } else {
      const growth = mib(tg.peak - tg.idle);
      say(
        '(d) peak RSS ≤ idle + 32 MiB',
        growth <= 32,
        `+${growth.toFixed(0)} MiB (${memory(tg)} MiB)`,
      );
    }
  }
  for (const id of ['e', 'f']) floorTarget(id, 0.95);
  // Overload: 256 connections on a 10-connection pool; the slowest 1 % no worse than the floor's.
  for (const id of ['a256', 'e256']) {
    const tg = find(results, id, 'tablegate');
    const floor = find(results, id, 'floor');
    const name = `(${id}) p99 ≤ 1.2 × floor's, no errors`;
    if (!tg) continue;
    if (!usable(tg) || !usable(floor)) {
      say(name, null, `tablegate ${tg.state}, floor ${floor?.state ?? 'not run'}`);
    } else {
      const ratio = tg.p99 / floor.p99;
      say(
        name,
        ratio <= 1.2 && tg.errors === 0,
        `${ms(tg.p99)} ms vs ${ms(floor.p99)} ms: ${ratio.toFixed(2)} ×, ${tg.errors} errors; ${(tg.rps / floor.rps).toFixed(2)} × the floor's req/s`,
      );
    }
  }
  // An agent's one-row read through MCP beside the REST read it wraps (scenario (a)).
  {
    const mcp = find(results, 'm', 'tablegate');
    const rest = find(results, 'a', 'tablegate');
    if (mcp) {
      if (!usable(mcp) || !usable(rest)) {
        say(
          '(m) MCP read_rows beside REST (a)',
          null,
          `m ${mcp.state}, a ${rest?.state ?? 'not run'}`,
        );
      } else {
        say(
          '(m) MCP read_rows ≥ 0.5 × REST (a)',
          mcp.rps / rest.rps >= 0.5,
          `${(mcp.rps / rest.rps).toFixed(2)} × (${num(mcp.rps, 0)} vs ${num(rest.rps, 0)} req/s)${cpuRatio(mcp, rest).replace("the floor's", "REST's")}`,
        );
      }
    }
  }
  // Totals over every row, the floor running the same SQL: at most 5 % slower.
  floorTarget('j', 0.95);
  // Related rows (docs/relations.md) in one request against the floor's three hand-written queries,
  // and a 100,000-order expanded read in bounded memory.
  if (find(results, 'i', 'tablegate')) floorTarget('i', 0.9);
  {
    const tg = find(results, 'i-all', 'tablegate');
    if (tg) {
      if (tg.state !== 'ok' || !tg.peak || !tg.idle) {
        say('(i) 100,000 expanded orders: peak RSS ≤ idle + 64 MiB', null, `tablegate ${tg.state}`);
      } else {
        const growth = mib(tg.peak - tg.idle);
        say(
          '(i) 100,000 expanded orders: peak RSS ≤ idle + 64 MiB',
          growth <= 64,
          `+${growth.toFixed(0)} MiB (${memory(tg)} MiB), median ${ms(tg.p50)} ms per read`,
        );
      }
    }
  }
  floorTarget('h', 0.95, 'tablegate-auth');
  // A --policy (docs/policies.md) costs a point read and a page at most 5 %.
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
