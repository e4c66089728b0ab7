/**
 * The application behind every front door (CONTRIBUTING.md, "How to add a front door"): an
 * Operation (operation.ts) and the caller → the table or routine for the role (decide.ts) → the
 * plan, through the read caches (read.ts) and re-made once against a fresh schema when it names
 * something the cached one does not know (db/schema.ts plan) → execute → an Answer (answer.ts).
 * A read's rows are the one thing left to run: the front door streams them or fetches them whole,
 * as its protocol frames them. A front door builds the Operation, calls handle and frames the
 * Answer; it decides nothing.
 */
import type { AnswerCache } from '../cache/answer-cache.js';
import { droppedByWrite } from '../cache/feed-drops.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import {
  deepInsertUnsupported,
  preconditionFailed,
  procedureNeedsPost,
  rowNotFound,
} from '../errors.js';
import type { Caller } from '../execute/caller.js';
import type { Database } from '../execute/database.js';
import type { ChainStep, WriteResult } from '../execute/write.js';
import type { Access } from '../policy/views.js';
import type { EntityTags } from '../query/entity-tags.js';
import type { WriteTarget } from '../query/key-value.js';
import { appliedPreferences, type Preferences } from '../query/prefer.js';
import type { CalledAnswer, RowAnswer, RowsAnswer, WrittenAnswer } from './answer.js';
import type { CompiledRead } from './compiled-read.js';
import { routinesFor, tableFor } from './decide.js';
import { type DeepWrite, deepCreate } from './deep-insert.js';
import type {
  CallOperation,
  KeyReadOperation,
  Operation,
  ReadOperation,
  WriteOperation,
} from './operation.js';
import { entityPrecondition, rowPrecondition } from './precondition.js';
import { compileKeyRead, type ReadPipeline } from './read.js';
import {
  type CallTarget,
  functionAnswer,
  functionJob,
  procedureAnswer,
  procedureJob,
} from './rpc.js';
import { conditionalJob, createJob, deleteJob, type PlannedWrite, updateJob } from './write.js';

/** A batch's change set failed (Handler.writeAll): which operation, and its refusal. */
export class ChangeSetFailure extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super('A change set failed');
    this.name = 'ChangeSetFailure';
  }
}

/**
 * A change set's write that can be made only once the writes before it ran (a `$batch` request
 * naming an earlier one by its Content-ID): `earlier[i]` is operation i's result (a deep
 * insert's: its top row's).
 */
export interface LaterWrite {
  readonly kind: 'later';
  readonly operation: (earlier: readonly (WriteResult | undefined)[]) => WriteOperation;
}

/** A write planned for the role: its table, action, preferences and job (or deep chain). */
interface Planned {
  readonly known: TableInfo;
  readonly action: WriteOperation['kind'];
  readonly preferences: Preferences;
  readonly planned: PlannedWrite | DeepWrite;
}

export class Handler {
  constructor(
    private readonly db: Database,
    private readonly schema: SchemaCache,
    /** The served database, where routines are called. */
    private readonly database: string,
    private readonly reads: ReadPipeline,
    /**
     * `--cache` (cache/answer-cache.ts): what a write or a call drops before its answer is
     * sent; null when there is none.
     */
    private readonly cache: AnswerCache | null = null,
  ) {}

  /**
   * The Operation's answer for the caller (`access`: its role under the policy, null without
   * one; `caller`: whom its statements run for). A read answers at once when its table is known
   * and its plan cached (the hot path makes no promise). A refusal
   * is thrown (or rejected) as the catalogue's error, or MySQL's: a front door frames it as the
   * error Answer `failed` makes of it, or lets its framework's error handler answer the same body.
   */
  handle(
    operation: ReadOperation,
    access: Access | null,
    caller: Caller,
  ): RowsAnswer | Promise<RowsAnswer>;
  handle(operation: KeyReadOperation, access: Access | null, caller: Caller): Promise<RowAnswer>;
  handle(operation: WriteOperation, access: Access | null, caller: Caller): Promise<WrittenAnswer>;
  handle(operation: CallOperation, access: Access | null, caller: Caller): Promise<CalledAnswer>;
  handle(
    operation: Operation,
    access: Access | null,
    caller: Caller,
  ): RowsAnswer | Promise<RowsAnswer | RowAnswer | WrittenAnswer | CalledAnswer> {
    switch (operation.kind) {
      case 'read':
        return this.read(operation, access, caller);
      case 'key-read':
        return this.keyRead(operation, access, caller);
      case 'create':
      case 'update':
      case 'delete':
        return this.write(operation, access, caller);
      case 'call':
        return this.call(operation, access, caller);
    }
  }

  /** Whether `read` belongs to one query string alone (ReadPipeline.isKept). */
  isKept(read: CompiledRead): boolean {
    return this.reads.isKept(read);
  }

  /** A read's rows fetched whole, for a front door that does not stream them. */
  fetch(read: CompiledRead, caller: Caller): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      this.db.arrays(
        read.select,
        (error, rows) => (error ? reject(error) : resolve((rows ?? []) as unknown[][])),
        caller,
      );
    });
  }

  private read(
    operation: ReadOperation,
    access: Access | null,
    caller: Caller,
  ): RowsAnswer | Promise<RowsAnswer> {
    const found = tableFor(this.schema, access, operation.table, 'read');
    // A known table with a cached plan answers at once (CONTRIBUTING: the read's fast path).
    return found instanceof Promise
      ? found.then((table) => this.readOf(table, operation, access, caller))
      : this.readOf(found, operation, access, caller);
  }

  private readOf(
    table: TableInfo,
    operation: ReadOperation,
    access: Access | null,
    caller: Caller,
  ): RowsAnswer | Promise<RowsAnswer> {
    const { query, queryText } = 'request' in operation ? operation.request() : operation;
    const made = this.reads.read(table, queryText, query, access);
    // A cached plan at once: no promise on the read's fast path.
    return made instanceof Promise
      ? made.then((compiled) => this.counted(table, compiled, access, caller))
      : this.counted(table, made, access, caller);
  }

  /** Admitted (the caller's budget, its `@user` values), its `$count` run when asked for. */
  private counted(
    table: TableInfo,
    compiled: CompiledRead,
    access: Access | null,
    caller: Caller,
  ): RowsAnswer {
    const read = this.reads.admit(compiled, access);
    const total = read.count === null ? null : this.db.count(read.count, caller);
    return { kind: 'rows', table, compiled, read, total };
  }

  /** `read(<key>,<value>)`: compiled afresh each time (a key read's URL seldom repeats). */
  private async keyRead(
    operation: KeyReadOperation,
    access: Access | null,
    caller: Caller,
  ): Promise<RowAnswer> {
    const known = await tableFor(this.schema, access, operation.table, 'read');
    const { key, query } = operation.request();
    const { flavour } = this.db;
    const made = await this.schema.plan(known, (t) =>
      compileKeyRead(t, key, query, access, flavour),
    );
    const read = this.reads.admit(made.plan, access);
    const [row] = await this.fetch(read, caller);
    if (row === undefined) throw rowNotFound(known.name);
    return { kind: 'row', read, row };
  }

  private async write(
    operation: WriteOperation,
    access: Access | null,
    caller: Caller,
  ): Promise<WrittenAnswer> {
    const { known, preferences, planned } = await this.planWrite(operation, access);
    let result: Awaited<ReturnType<Database['write']>>;
    try {
      if ('steps' in planned) {
        const results = await this.db.writeChain(planned.steps, caller);
        return this.deepAnswer(planned, results, preferences);
      }
      result = await this.db.write(planned.job, caller);
    } finally {
      // Read your writes: dropped before the answer goes, also when its outcome is unknown; a
      // deep insert's children are of other tables: everything goes.
      if (this.cache !== null) {
        if ('steps' in planned) this.cache.flush();
        else droppedByWrite(this.cache, known);
      }
    }
    return {
      kind: 'written',
      action: operation.kind,
      planned,
      result,
      applied: appliedPreferences(preferences, planned.applied),
    };
  }

  /**
   * The write as If-Match asks (docs/caching.md): unchanged without it; by key, or by an OData
   * entity's composite key, checked on the locked row first in its transaction (precondition.ts);
   * by `$filter`, refused (no one row's tag). Planned first, so that the request's own errors
   * come before a 412.
   */
  private ifMatch(
    planned: PlannedWrite,
    table: TableInfo,
    target: WriteTarget,
    tags: EntityTags | null | undefined,
    access: Access | null,
  ): PlannedWrite {
    if (tags === null || tags === undefined) return planned;
    const admit = (read: CompiledRead) => this.reads.admit(read, access);
    const { flavour } = this.db;
    if (target.kind === 'key') {
      const check = rowPrecondition(table, target.match, access, tags, flavour, admit);
      return conditionalJob(planned, table, check);
    }
    if (target.entity !== true) throw preconditionFailed(table.name, false);
    const check = entityPrecondition(table, target.filter, access, tags, flavour, admit);
    return conditionalJob(planned, table, check);
  }

  /**
   * Several writes in one transaction, all or none (a `$batch` change set): each planned and
   * guarded exactly as alone, in order, then run as one chain on one connection
   * (Database.writeChain), each answered as alone. A LaterWrite is planned when its turn comes,
   * inside the transaction, from the results before it. The first refusal — in planning or in
   * the transaction — rolls everything back and is thrown as a ChangeSetFailure naming whose.
   */
  async writeAll(
    operations: readonly (WriteOperation | LaterWrite)[],
    access: Access | null,
    caller: Caller,
    /** Per operation, a check of its result that may refuse the whole set (throwing). */
    checks?: readonly (((result: WriteResult) => void) | undefined)[],
  ): Promise<WrittenAnswer[]> {
    const made: (Planned | null)[] = [];
    for (const [index, operation] of operations.entries()) {
      if (operation.kind === 'later') {
        made.push(null);
        continue;
      }
      try {
        made.push(await this.planWrite(operation, access));
      } catch (error) {
        throw new ChangeSetFailure(index, error);
      }
    }
    // Each operation's steps, and where they start in the one chain.
    const steps: ChainStep[] = [];
    const starts: number[] = [];
    for (const [index, planned] of made.entries()) {
      const start = steps.length;
      starts.push(start);
      const check = checks?.[index];
      const checked = (job: ChainStep['job']): ChainStep =>
        check === undefined ? { job } : { job, check };
      if (planned === null) {
        const later = operations[index] as LaterWrite;
        steps.push(
          checked(async (all) => {
            const operation = later.operation(starts.slice(0, index).map((at) => all[at]));
            const now = await this.planWrite(operation, access);
            if ('steps' in now.planned) {
              throw deepInsertUnsupported(
                'A write that names an earlier request cannot create related rows',
              );
            }
            made[index] = now;
            return now.planned.job;
          }),
        );
      } else if ('steps' in planned.planned) {
        for (const step of planned.planned.steps) {
          steps.push({ job: (all) => step.job(all.slice(start)) });
        }
      } else {
        const { job } = planned.planned;
        steps.push(checked(() => job));
      }
    }
    const failed = { step: 0 };
    let results: WriteResult[];
    try {
      results = await this.db.writeChain(steps, caller, failed);
    } catch (error) {
      this.dropWritten(made);
      let index = 0;
      while (index + 1 < starts.length && (starts[index + 1] as number) <= failed.step) index++;
      throw new ChangeSetFailure(index, error);
    }
    this.dropWritten(made);
    return (made as Planned[]).map(({ action, preferences, planned }, index): WrittenAnswer => {
      const start = starts[index] as number;
      if ('steps' in planned) {
        const end = starts[index + 1] ?? results.length;
        return this.deepAnswer(planned, results.slice(start, end), preferences);
      }
      return {
        kind: 'written',
        action,
        planned,
        result: results[start] as WriteResult,
        applied: appliedPreferences(preferences, planned.applied),
      };
    });
  }

  /** Read your writes for a change set: what its writes touched, before its answer goes. */
  private dropWritten(made: readonly (Planned | null)[]) {
    const { cache } = this;
    if (cache === null) return;
    for (const one of made) {
      // A later write that was never planned wrote nothing.
      if (one === null) continue;
      const { known, planned } = one;
      if ('steps' in planned) cache.flush();
      else droppedByWrite(cache, known);
    }
  }

  private deepAnswer(
    planned: DeepWrite,
    results: readonly WriteResult[],
    preferences: Preferences,
  ): WrittenAnswer {
    const top = planned.top();
    return {
      kind: 'written',
      action: 'create',
      planned: top,
      result: results[0] as WriteResult,
      applied: appliedPreferences(preferences, top.applied),
      related: planned.relatedText(results),
    };
  }

  /** The table for the role, and the write's job (or a deep insert's chain) planned against it. */
  private async planWrite(operation: WriteOperation, access: Access | null): Promise<Planned> {
    const known = await tableFor(this.schema, access, operation.table, operation.kind);
    const { flavour } = this.db;
    let preferences: Preferences;
    let make: (table: TableInfo) => PlannedWrite | DeepWrite;
    switch (operation.kind) {
      case 'create': {
        const request = operation.request(known);
        preferences = request.preferences;
        make = (t) =>
          deepCreate(t, request.body, access, request.preferences, flavour) ??
          createJob(t, request.body, access, request.preferences, flavour);
        break;
      }
      case 'update': {
        const request = operation.request(known);
        preferences = request.preferences;
        make = (t) =>
          this.ifMatch(
            updateJob(t, request.target, request.body, access, request.preferences, flavour),
            t,
            request.target,
            request.ifMatch,
            access,
          );
        break;
      }
      case 'delete': {
        const request = operation.request(known);
        preferences = request.preferences;
        make = (t) =>
          this.ifMatch(
            deleteJob(t, request.target, access, request.preferences),
            t,
            request.target,
            request.ifMatch,
            access,
          );
        break;
      }
    }
    const { plan } = await this.schema.plan(known, make);
    return { known, action: operation.kind, preferences, planned: plan };
  }

  /**
   * A routine's call: with a body, the procedure of that name, else the function; with a query
   * string, the function alone. One call, never in a transaction of ours.
   */
  private async call(
    operation: CallOperation,
    access: Access | null,
    caller: Caller,
  ): Promise<CalledAnswer> {
    const found = await routinesFor(this.schema, access, operation.routine);
    const given = operation.request();
    // The flavour of the host in use, which `-h db1,db2` may change.
    const target: CallTarget = { database: this.database, flavour: this.db.flavour };
    try {
      return { kind: 'called', text: await this.run(found, given, target, operation, caller) };
    } finally {
      // A routine may change any table: everything goes before its answer does.
      this.cache?.flush();
    }
  }

  private async run(
    found: Awaited<ReturnType<typeof routinesFor>>,
    given: ReturnType<CallOperation['request']>,
    target: CallTarget,
    operation: CallOperation,
    caller: Caller,
  ): Promise<string> {
    let text: string;
    if ('query' in given) {
      if (found.function === undefined) throw procedureNeedsPost(operation.routine);
      text = functionAnswer(await this.db.call(functionJob(target, found.function, given), caller));
    } else if (found.procedure === undefined) {
      text = functionAnswer(await this.db.call(functionJob(target, found.function, given), caller));
    } else {
      const job = procedureJob(target, found.procedure, given.body);
      text = procedureAnswer(await this.db.call(job, caller));
    }
    return text;
  }
}
