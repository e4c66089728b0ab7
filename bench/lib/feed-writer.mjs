/**
 * The writer of the feed bench (bench/changes.mjs), a process of its own so that it shares no
 * event loop with the clients: plain mysql2 connections committing single-row changes to
 * `events` on a fixed schedule (change i is due at start + i / rate). Change i belongs to owner
 * i mod users; every fifth is an update of that owner's seed row, the others inserts. Each row
 * carries its change number (`seq`) and the time just before its statement was sent
 * (`sent_us`, µs since the epoch); the statement is its own transaction (autocommit), so the
 * clients' commit-to-delivery includes the commit's own round trip, reported here beside it.
 * Driven through the IPC channel: `{type: 'write', …}` → `{type: 'written', …}`.
 */
import mysql from 'mysql2/promise';

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

/** `YYYY-MM-DD HH:MM:SS.ffffff` in UTC from µs since the epoch. */
function datetime(us) {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  const micro = String(Math.floor(us % 1_000_000)).padStart(6, '0');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${micro}`;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function write({ db, rate, seconds, users, seedIds, connections, firstSeq }) {
  const total = Math.round(rate * seconds);
  const pool = await Promise.all(
    Array.from({ length: connections }, () => mysql.createConnection({ ...db, timezone: 'Z' })),
  );
  const commitMs = [];
  let next = 0;
  let behindMs = 0;
  let failed = 0;
  let firstError = null;
  const started = performance.now();
  const body = 'x'.repeat(40);
  await Promise.all(
    pool.map(async (connection) => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        else behindMs = Math.max(behindMs, -wait);
        const seq = firstSeq + i;
        const owner = seq % users;
        const sent = Math.round(nowUs());
        const at = datetime(sent);
        try {
          if (seq % 5 === 4) {
            await connection.execute(
              'UPDATE events SET seq = ?, sent_us = ?, updated_at = ?, body = ? WHERE id = ?',
              [seq, sent, at, body, seedIds[owner]],
            );
          } else {
            await connection.execute(
              'INSERT INTO events (owner, seq, sent_us, updated_at, body) VALUES (?, ?, ?, ?, ?)',
              [`user${owner}@bench.example`, seq, sent, at, body],
            );
          }
          commitMs.push((nowUs() - sent) / 1000);
        } catch (error) {
          failed++;
          firstError ??= error.message;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  // This process's own statements, which the parent takes out of the server's counters.
  let questions = 0;
  for (const connection of pool) {
    const [[row]] = await connection.query("SHOW SESSION STATUS LIKE 'Questions'");
    questions += Number(row.Value);
    await connection.end();
  }
  commitMs.sort((a, b) => a - b);
  return {
    type: 'written',
    total,
    committed: commitMs.length,
    failed,
    firstError,
    seconds: elapsed,
    rate: commitMs.length / elapsed,
    commitP50: percentile(commitMs, 50),
    commitP99: percentile(commitMs, 99),
    behindMs,
    questions,
  };
}

process.on('message', async (message) => {
  if (message.type === 'write') process.send(await write(message));
  if (message.type === 'exit') process.exit(0);
});
