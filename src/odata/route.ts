/**
 * The OData service (docs/odata.md): one request under `/odata/` → the Operation of the REST
 * request it stands for → handle (pipeline/handle.ts) → the Answer framed in OData's shapes.
 * What the role may see and do is handle's to decide; the role's OData model (model.ts, made
 * once per role and schema version: service-cache.ts) only translates names and keys, and
 * says which name is an entity set and which a function or action import. A name the model
 * does not know goes to handle as the table it stands for, which answers its 404.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { allRoutines } from '../db/routines.js';
import {
  answerTooLarge,
  invalidQuery,
  methodNotAllowed,
  odataReadOnly,
  odataUnsupported,
  routeNotFound,
  rowNotFound,
} from '../errors.js';
import { etagOf } from '../etag.js';
import type { Loopback } from '../http/loopback.js';
import { NextLinks } from '../http/next-link.js';
import { notModified } from '../http/read-tag.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import type { Handler } from '../pipeline/handle.js';
import type { KeyReadOperation, ReadOperation, ReadQuery } from '../pipeline/operation.js';
import { rawQueryString } from '../pipeline/read-cache.js';
import { documentView } from '../policy/document-view.js';
import { noneMatchHolds, parseEntityTags } from '../query/entity-tags.js';
import type { WriteTarget } from '../query/key-value.js';
import { excerpt, parseLiteral } from '../query/lexer.js';
import type { QueryObject } from '../query/options.js';
import { NO_PREFERENCES, type Preferences } from '../query/prefer.js';
import type { Services } from '../services.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { Field } from '../types/rows.js';
import { parametersBody, writeBody } from './body.js';
import { serviceEntries } from './csdl.js';
import { entitySerializer, fieldText, leadingEntities, slotsOf } from './entity-json.js';
import { dataFormat, metadataFormat, type ODataFormat, odataPreferences } from './format.js';
import { type EntityKey, entityKey, entityTarget, keyPredicate } from './key.js';
import { FULL_VIEW, modelSteps, NAMESPACE, type ODataModel, type ODataSet } from './model.js';
import { decodeName, encodeName, queryName, tableNamed } from './names.js';
import { type PredicatePart, parsePath } from './path.js';
import { pagingOf, translateQuery } from './query.js';
import { ServiceCache } from './service-cache.js';

/** Where the service is, under the gateway's root. */
export const ODATA_PREFIX = '/odata';

type Query = Record<string, string | readonly string[]>;

const contentType = (format: ODataFormat): string =>
  `application/json;odata.metadata=${format.metadata};IEEE754Compatible=${format.ieee754};charset=utf-8`;

export class ODataService {
  private readonly cache = new ServiceCache();
  private readonly links: NextLinks;

  constructor(
    private readonly services: Services,
    private readonly handler: Handler,
    private readonly loopback: Loopback,
  ) {
    this.links = new NextLinks(
      services.skiptokens,
      services.config.baseUrl,
      (read) => handler.isKept(read),
      {
        path: (table) => `${ODATA_PREFIX}/${encodeURIComponent(encodeName(table.name))}`,
        open: '',
        close: '',
      },
    );
  }

  /** The role's model, for a `$batch` of the same caller (batch.ts). */
  async modelOf(request: FastifyRequest): Promise<ODataModel> {
    return this.model(request);
  }

  /** The role's model: keyed as the API description is (http/docs.ts), by role and token. */
  private model(request: FastifyRequest): ODataModel | Promise<ODataModel> {
    const { config, policy, schema } = this.services;
    const role = request.access?.role ?? '';
    const signedIn = config.mode !== 'auth' || request.auth !== null;
    const named = policy === undefined || policy.roles.has(role);
    const key = JSON.stringify([signedIn, named ? role : null]);
    return this.cache.model(key, schema.version, () => {
      const tables = [...schema.all()];
      const routines = allRoutines(schema.routines);
      const view =
        policy && request.access ? { ...documentView(policy, role), signedIn } : FULL_VIEW;
      return modelSteps(tables, routines, view);
    });
  }

  /** `--base-url`, else the request's own scheme and host, then `/odata`. */
  private root(request: FastifyRequest): string {
    return `${this.origin(request)}${ODATA_PREFIX}`;
  }

  /**
   * `--base-url`, else the request's scheme and host — for a read of a `$batch`, which reaches
   * this route over a loopback (batch.ts), the batch's own (http/loopback.ts).
   */
  private origin(request: FastifyRequest): string {
    const { baseUrl } = this.services.config;
    if (baseUrl !== null) return baseUrl;
    const outer = this.loopback.open(request);
    if (outer !== null) return outer.origin;
    return `${request.protocol}://${request.host}`;
  }

  /**
   * The header a `$batch` puts on its reads: they answer with the batch's scheme and host, and
   * count as its caller's.
   */
  loopbackHeaders(outer: FastifyRequest): Record<string, string> {
    return this.loopback.seal({ client: outer.client, origin: this.origin(outer) });
  }

  /** Answers one OData request. */
  async answer(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const url = request.url;
    const end = url.indexOf('?');
    const path = parsePath(url.slice(ODATA_PREFIX.length + 1, end === -1 ? undefined : end));
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (path.kind === 'service' || path.kind === 'metadata') {
      if (method !== 'GET') throw routeNotFound(request.method, url);
      try {
        await this.services.schema.refreshIfChanged();
      } catch {
        // MySQL is down: the schema read before still describes the service.
      }
      const model = await this.model(request);
      return path.kind === 'service'
        ? this.serviceDocument(request, reply, model)
        : this.metadata(request, reply);
    }
    const { name, predicate, rest } = path;
    // POST /odata/$batch is its own route (batch.ts); asked otherwise it is that path's 405.
    if (name === '$batch' && predicate === null && rest.length === 0) {
      throw methodNotAllowed(request.method, ['POST']);
    }
    const model = await this.model(request);
    const set = model.sets.get(name);
    const table = tableNamed(set, name);
    if (set === undefined && predicate !== null && method === 'GET') {
      const fn = model.functions.get(name);
      if (fn !== undefined && rest.length === 0)
        return this.callFunction(request, reply, model, name, predicate);
    }
    if (set === undefined && method === 'POST' && rest.length === 0) {
      const action = model.actions.get(name);
      if (action !== undefined && (predicate === null || predicate.length === 0)) {
        return this.callAction(request, reply, action.routine.name);
      }
    }
    if (predicate === null) {
      if (method === 'GET') {
        if (rest.length === 0) return this.collection(request, reply, set, table, name, false);
        if (rest.length === 1 && rest[0] === '$count') {
          return this.collection(request, reply, set, table, name, true);
        }
        throw routeNotFound(request.method, url);
      }
      if (method === 'POST' && rest.length === 0) return this.create(request, reply, set, table);
      throw routeNotFound(request.method, url);
    }
    switch (method) {
      case 'GET':
        return this.entity(request, reply, set, table, predicate, rest);
      case 'PATCH':
      case 'PUT':
        if (rest.length > 0) throw routeNotFound(request.method, url);
        return this.update(request, reply, set, table, predicate, method);
      case 'DELETE':
        if (rest.length > 0) throw routeNotFound(request.method, url);
        return this.remove(request, reply, set, table, predicate);
      default:
        throw routeNotFound(request.method, url);
    }
  }

  private serviceDocument(request: FastifyRequest, reply: FastifyReply, model: ODataModel) {
    const format = dataFormat(queryValue(request.query, '$format'), request.headers.accept);
    const context =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${this.root(request)}/$metadata`)},`;
    const text = `{${context}"value":${JSON.stringify(serviceEntries(model))}}`;
    return reply.type(contentType(format)).send(text);
  }

  private async metadata(request: FastifyRequest, reply: FastifyReply) {
    const { config, policy, schema } = this.services;
    const format = metadataFormat(queryValue(request.query, '$format'), request.headers.accept);
    const role = request.access?.role ?? '';
    const signedIn = config.mode !== 'auth' || request.auth !== null;
    const named = policy === undefined || policy.roles.has(role);
    const key = JSON.stringify([signedIn, named ? role : null]);
    const made = await this.cache.metadata(
      key,
      schema.version,
      () => {
        const view =
          policy && request.access ? { ...documentView(policy, role), signedIn } : FULL_VIEW;
        return modelSteps([...schema.all()], allRoutines(schema.routines), view);
      },
      format,
    );
    reply.header('ETag', made.etag);
    reply.header('Cache-Control', config.mode === 'auth' ? 'private, no-cache' : 'no-cache');
    if (noneMatchHolds(parseEntityTags(request.headers['if-none-match']), made.etag)) {
      return reply.code(304).send();
    }
    return reply
      .type(format === 'xml' ? 'application/xml; charset=utf-8' : 'application/json; charset=utf-8')
      .send(made.bytes);
  }

  /** `GET /odata/<Set>` and `/odata/<Set>/$count`. */
  private async collection(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet | undefined,
    table: string,
    name: string,
    countOnly: boolean,
  ): Promise<FastifyReply> {
    const client = request.query as QueryObject;
    const { query, format: formatText } = translateQuery(client);
    const format = dataFormat(formatText, request.headers.accept);
    const preferences = odataPreferences(request.headers.prefer);
    const { odataMaxPage } = this.services.config;
    const paging = countOnly ? null : pagingOf(query.$top, preferences.maxPageSize, odataMaxPage);
    const lookahead = paging?.serverDriven === true && query.$apply !== undefined;
    if (countOnly) {
      for (const option of ['$top', '$skip', '$orderby', '$select', '$expand', '$skiptoken']) {
        delete query[option];
      }
      query.$count = 'true';
      query.$top = '0';
    } else if (paging !== null) {
      // A page of totals pages by $skip, so no last row says whether more follow: one group
      // past the page says it, and a full last page gets no link to an empty one.
      query.$top = String(lookahead ? paging.top + 1 : paging.top);
    }
    const raw = rawQueryString(request.url);
    const operation: ReadOperation = {
      kind: 'read',
      table,
      query,
      // Its own form of key (pipeline/read-cache.ts): no REST query string starts with \u0002.
      queryText: raw === null ? null : `\u0002${countOnly ? 'c' : (paging?.top ?? '')}&${raw}`,
    };
    const answered = await this.handler.handle(operation, request.access, request);
    const total = answered.total === null ? null : await answered.total;
    if (countOnly) return tagged(reply, 'text/plain; charset=utf-8', String(total ?? 0));
    const fetched = await this.handler.fetch(answered.read, request);
    const more = lookahead && paging !== null && fetched.length > paging.top;
    const rows = more ? fetched.slice(0, paging?.top) : fetched;
    const serialize = this.entities(set, answered.read.fields, format, request);
    let text = '{';
    if (format.metadata !== 'none') {
      const select =
        typeof query.$select === 'string' && query.$select.trim() !== '*'
          ? `(${(client.$select as string).replace(/\s+/g, '')})`
          : '';
      text += `"@odata.context":${JSON.stringify(`${this.root(request)}/$metadata#${name}${select}`)},`;
    }
    if (total !== null) text += `"@odata.count":${total},`;
    text += '"value":[';
    const max = this.services.config.maxAnswerBytes;
    let bytes = text.length;
    for (let i = 0; i < rows.length; i++) {
      const entity = serialize(rows[i] as unknown[]);
      bytes += entity.length + 1;
      if (max > 0 && bytes > max) throw answerTooLarge(max);
      text += (i === 0 ? '' : ',') + entity;
    }
    text += ']';
    const full = lookahead ? more : rows.length === paging?.top;
    if (paging?.serverDriven && full && rows.length > 0) {
      const next = this.nextLink(request, answered, query, client, paging.remaining, rows);
      if (next !== null) text += `,"@odata.nextLink":${JSON.stringify(next)}`;
    }
    if (preferences.maxPageSize !== null && paging !== null) {
      reply.header(
        'Preference-Applied',
        `odata.maxpagesize=${Math.min(preferences.maxPageSize, odataMaxPage)}`,
      );
    }
    return tagged(reply, contentType(format), `${text}}`);
  }

  /**
   * The next page's URL: the keyset `$skiptoken` of a paged read (http/next-link.ts), or, for a
   * read that pages by count alone (`$apply`), the same request with `$skip` past this page.
   */
  private nextLink(
    request: FastifyRequest,
    answered: { table: import('../db/schema-types.js').TableInfo; compiled: CompiledRead },
    query: Query,
    client: QueryObject,
    remaining: number | null,
    rows: readonly unknown[][],
  ): string | null {
    const shown: Record<string, string | readonly string[]> = {};
    for (const [key, value] of Object.entries(client)) if (value !== undefined) shown[key] = value;
    if (remaining === null) delete shown.$top;
    else shown.$top = String(remaining);
    if (query.$apply === undefined) {
      const link = this.links.of(answered.table, query, answered.compiled, shown);
      const made = link?.(rows.length, rows[rows.length - 1], true) ?? null;
      if (made === null) return null;
      return this.services.config.baseUrl === null ? `${this.origin(request)}${made}` : made;
    }
    const skip = Number(queryValue(client, '$skip') ?? '0') + rows.length;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(shown)) {
      if (key === '$skip') continue;
      for (const one of typeof value === 'string' ? [value] : value) params.append(key, one);
    }
    params.append('$skip', String(skip));
    const path = url(request).split('?')[0] as string;
    return `${this.origin(request)}${path}?${params.toString()}`;
  }

  /** Each row as an entity, with `@odata.id`, `@odata.editLink` and `@odata.type` for full metadata. */
  private entities(
    set: ODataSet | undefined,
    fields: readonly Field[],
    format: ODataFormat,
    request: FastifyRequest,
  ): (row: unknown[]) => string {
    const serialize = entitySerializer(fields, format.ieee754);
    if (format.metadata !== 'full' || set === undefined) return serialize;
    const type = `"@odata.type":${JSON.stringify(`#${NAMESPACE}.${set.name}`)}`;
    const at = set.key.map((p) =>
      fields.findIndex((f) => f.kind === 'value' && f.column.name === p.column.name),
    );
    const root = this.root(request);
    return (row) => {
      const text = serialize(row);
      let head = `{${type}`;
      if (at.every((i) => i !== -1)) {
        const values = at.map((i) => fieldText(fields, i, row, false));
        const id = JSON.stringify(`${root}/${set.name}${keyPredicate(set, values)}`);
        head += `,"@odata.id":${id},"@odata.editLink":${id}`;
      }
      return text === '{}' ? `${head}}` : `${head},${text.slice(1)}`;
    };
  }

  /**
   * The one entity of a key: a key read, or a read of the key's filter (model.ts KeyKind).
   * `tagged`: with the entity's tag (entityTag), null for a read-only set's formed key.
   */
  private async one(
    request: FastifyRequest,
    set: ODataSet | undefined,
    table: string,
    predicate: readonly PredicatePart[],
    query: Query,
    tagged = false,
  ): Promise<{ fields: readonly Field[]; row: unknown[]; tag: string | null }> {
    const keyOf = (): EntityKey => {
      if (set === undefined) {
        throw invalidQuery(`'${excerpt(table)}' has no key that OData can name (docs/odata.md)`);
      }
      return entityKey(set, predicate);
    };
    const direct = set === undefined || (set.key.length === 1 && set.keyKind !== 'formed');
    if (direct) {
      const operation: KeyReadOperation = {
        kind: 'key-read',
        table,
        request: () => {
          const key = keyOf();
          if (key.kind !== 'key') throw invalidQuery('unreachable');
          return { key: key.match, query };
        },
      };
      const { read, row } = await this.handler.handle(operation, request.access, request);
      if (!tagged || set === undefined) return { fields: read.fields, row, tag: null };
      if (Object.keys(query).length === 0)
        return { fields: read.fields, row, tag: entityTag(read, row) };
      // `$select`/`$expand` shaped this row: the tag is the whole row's, as If-Match reads it.
      const whole = await this.handler.handle(
        { ...operation, request: () => ({ ...operation.request(), query: {} }) },
        request.access,
        request,
      );
      return { fields: read.fields, row, tag: entityTag(whole.read, whole.row) };
    }
    const operation: ReadOperation = {
      kind: 'read',
      table,
      request: (): ReadQuery => {
        const key = keyOf();
        for (const option of Object.keys(query)) {
          if (option.startsWith('$') && option !== '$select' && option !== '$expand') {
            throw invalidQuery(`An entity's read takes $select and $expand only, not ${option}`);
          }
        }
        return {
          query: { ...query, $filter: key.kind === 'filter' ? key.filter : '', $top: '1' },
          queryText: null,
        };
      },
    };
    const answered = await this.handler.handle(operation, request.access, request);
    const [row] = await this.handler.fetch(answered.read, request);
    if (row === undefined) throw rowNotFound(table);
    // A formed key may name many rows (docs/odata.md, "Keys"): no one row's tag.
    if (!tagged || set === undefined || set.keyKind === 'formed') {
      return { fields: answered.read.fields, row, tag: null };
    }
    if (!Object.keys(query).some((option) => option.startsWith('$'))) {
      return { fields: answered.read.fields, row, tag: entityTag(answered.read, row) };
    }
    // As for a one-column key: the tag is the whole row's, which If-Match reads.
    const whole = await this.handler.handle(
      { ...operation, request: () => ({ ...operation.request(), query: filterOnly(operation) }) },
      request.access,
      request,
    );
    const [wholeRow] = await this.handler.fetch(whole.read, request);
    if (wholeRow === undefined) throw rowNotFound(table);
    return { fields: answered.read.fields, row, tag: entityTag(whole.read, wholeRow) };
  }

  /** `GET /odata/<Set>(<key>)`, and its navigation, property or property's `$value`. */
  private async entity(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet | undefined,
    table: string,
    predicate: readonly PredicatePart[],
    rest: readonly string[],
  ): Promise<FastifyReply> {
    const client = request.query as QueryObject;
    const { query, format: formatText } = translateQuery(client);
    const format = dataFormat(formatText, request.headers.accept);
    const root = this.root(request);
    const type = contentType(format);
    const context = (fragment: string): string =>
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${root}/$metadata#${fragment}`)}`;
    if (rest.length === 0) {
      const { fields, row, tag } = await this.one(request, set, table, predicate, query, true);
      const text = this.entities(set, fields, format, request)(row);
      let head = context(`${set?.name ?? encodeName(table)}/$entity`);
      if (tag !== null) {
        reply.header('ETag', tag);
        if (head !== '') head += `,"@odata.etag":${JSON.stringify(tag)}`;
      }
      return reply.type(type).send(joinObject(head, text));
    }
    const segment = rest[0] as string;
    const navigation = set?.navigationByName.get(segment);
    if (navigation !== undefined && rest.length === 1) {
      return this.navigate(
        request,
        reply,
        set as ODataSet,
        table,
        predicate,
        navigation.name,
        query,
        format,
      );
    }
    const property = set?.property.get(segment);
    if (property === undefined || rest.length > 2 || (rest.length === 2 && rest[1] !== '$value')) {
      throw routeNotFound(request.method, request.url);
    }
    if (Object.keys(query).some((option) => option.startsWith('$'))) {
      throw invalidQuery(`A property's read takes no query options`);
    }
    const { fields, row } = await this.one(request, set, table, predicate, {
      $select: queryName(property.column.name),
    });
    const value = fieldText(fields, 0, row, format.ieee754);
    if (value === 'null') return reply.code(204).send();
    if (rest.length === 2) return this.rawValue(reply, property.edm.name, value);
    const head = context(`${(set as ODataSet).name}(${predicateText(predicate)})/${property.name}`);
    return reply.type(type).send(`{${head}${head === '' ? '' : ','}"value":${value}}`);
  }

  /** `/$value`: a property's raw value (text, or bytes for Edm.Binary). */
  private rawValue(reply: FastifyReply, edm: string, json: string): FastifyReply {
    if (edm === 'Edm.Binary') {
      const bytes = Buffer.from(JSON.parse(json) as string, 'base64url');
      return reply.type('application/octet-stream').send(bytes);
    }
    const text = json.startsWith('"') ? (JSON.parse(json) as string) : json;
    return reply.type('text/plain; charset=utf-8').send(text);
  }

  /** `GET /odata/<Set>(<key>)/<navigation>`: the key read of the parent with the relation expanded. */
  private async navigate(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet,
    table: string,
    predicate: readonly PredicatePart[],
    navigationName: string,
    query: Query,
    format: ODataFormat,
  ): Promise<FastifyReply> {
    const navigation = set.navigationByName.get(navigationName);
    if (navigation === undefined) throw routeNotFound(request.method, request.url);
    const many = navigation.relation.kind === 'many';
    const nested: string[] = [];
    const preferences = odataPreferences(request.headers.prefer);
    const paging = many
      ? pagingOf(query.$top, preferences.maxPageSize, this.services.config.odataMaxPage)
      : null;
    for (const [option, value] of Object.entries(query)) {
      if (!option.startsWith('$')) continue;
      if (!['$select', '$filter', '$orderby', '$top', '$skip', '$expand'].includes(option)) {
        throw odataUnsupported(`${option} is not served on a navigation property (docs/odata.md)`);
      }
      if (typeof value !== 'string')
        throw invalidQuery(`Query option ${option} is given more than once`);
      if (option === '$top' && paging !== null) continue;
      nested.push(`${option}=${value}`);
    }
    // A server-driven page reads one related row past its end: a full last page then has no
    // link to an empty one (as a page of totals, collection).
    if (paging !== null) nested.push(`$top=${paging.serverDriven ? paging.top + 1 : paging.top}`);
    const expand = `${queryName(navigation.relation.name)}${nested.length === 0 ? '' : `(${nested.join(';')})`}`;
    const keys = set.key.map((p) => queryName(p.column.name)).join(',');
    const { fields, row } = await this.one(request, set, table, predicate, {
      $select: keys,
      $expand: expand,
    });
    const index = fields.findIndex(
      (f) => f.kind !== 'value' && f.name === navigation.relation.name,
    );
    const value = fieldText(fields, index, row, format.ieee754);
    const root = this.root(request);
    const target = navigation.target;
    if (!many) {
      if (value === 'null') return reply.code(204).send();
      const head =
        format.metadata === 'none'
          ? ''
          : `"@odata.context":${JSON.stringify(`${root}/$metadata#${target}/$entity`)}`;
      return reply.type(contentType(format)).send(joinObject(head, value));
    }
    let text = '{';
    if (format.metadata !== 'none') {
      text += `"@odata.context":${JSON.stringify(`${root}/$metadata#${target}`)},`;
    }
    const slot = slotsOf(fields)[index] as number;
    const cell = String(row[slot] ?? '0:');
    const page = paging?.serverDriven === true ? paging : null;
    const more = page !== null && Number(cell.slice(0, cell.indexOf(':'))) > page.top;
    text += `"value":${more ? leadingEntities(value, page.top) : value}`;
    if (more) {
      const client = request.query as QueryObject;
      const params = new URLSearchParams();
      for (const [key, given] of Object.entries(client)) {
        if (given === undefined || key === '$skip' || key === '$top') continue;
        for (const one of typeof given === 'string' ? [given] : given) params.append(key, one);
      }
      if (page.remaining !== null) params.append('$top', String(page.remaining));
      params.append('$skip', String(Number(queryValue(client, '$skip') ?? '0') + page.top));
      const path = url(request).split('?')[0] as string;
      text += `,"@odata.nextLink":${JSON.stringify(`${this.origin(request)}${path}?${params.toString()}`)}`;
    }
    return tagged(reply, contentType(format), `${text}}`);
  }

  /** `POST /odata/<Set>`: 201 with the entity and its Location (204 for `return=minimal`). */
  private async create(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet | undefined,
    table: string,
  ): Promise<FastifyReply> {
    const format = dataFormat(queryValue(request.query, '$format'), request.headers.accept);
    const preferences = odataPreferences(request.headers.prefer);
    const answered = await this.handler.handle(
      {
        kind: 'create',
        table,
        request: () => {
          if (set !== undefined && set.keyKind === 'formed') throw odataReadOnly(set.name);
          return { body: writeBody(set, 'POST', request.body), preferences: READ_BACK };
        },
      },
      request.access,
      request,
    );
    const row = answered.result.rows?.[0];
    const fields = answered.planned.fields;
    if (set === undefined || row === undefined || fields === undefined) {
      return reply.code(204).send();
    }
    const at = set.key.map((p) =>
      fields.findIndex((f) => f.kind === 'value' && f.column.name === p.column.name),
    );
    if (at.every((i) => i !== -1)) {
      const values = at.map((i) => fieldText(fields, i, row as unknown[], false));
      const location = `${this.root(request)}/${set.name}${keyPredicate(set, values)}`;
      reply.header('Location', location);
      if (preferences.returns === 'minimal') reply.header('OData-EntityId', location);
    }
    if (preferences.returns === 'minimal') {
      return reply.code(204).header('Preference-Applied', 'return=minimal').send();
    }
    const text = this.entities(set, fields, format, request)(row as unknown[]);
    const head =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${this.root(request)}/$metadata#${set.name}/$entity`)}`;
    if (preferences.returns === 'representation')
      reply.header('Preference-Applied', 'return=representation');
    return reply.code(201).type(contentType(format)).send(joinObject(head, text));
  }

  /** `PATCH` (merge) and `PUT` (replace) of one entity: 204, or 200 with `return=representation`. */
  private async update(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet | undefined,
    table: string,
    predicate: readonly PredicatePart[],
    method: 'PATCH' | 'PUT',
  ): Promise<FastifyReply> {
    const format = dataFormat(queryValue(request.query, '$format'), request.headers.accept);
    const preferences = odataPreferences(request.headers.prefer);
    const representation = preferences.returns === 'representation';
    const answered = await this.handler.handle(
      {
        kind: 'update',
        table,
        request: () => {
          const target = this.targetOf(set, table, predicate);
          const body = writeBody(set, method, request.body);
          return {
            target,
            body,
            preferences: representation ? READ_BACK : NO_PREFERENCES,
            ifMatch: parseEntityTags(request.headers['if-match']),
          };
        },
      },
      request.access,
      request,
    );
    if (answered.result.affectedRows === 0) throw rowNotFound(table);
    const row = answered.result.rows?.[0];
    const fields = answered.planned.fields;
    if (!representation || set === undefined || row === undefined || fields === undefined) {
      return reply.code(204).send();
    }
    const text = this.entities(set, fields, format, request)(row as unknown[]);
    const head =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${this.root(request)}/$metadata#${set.name}/$entity`)}`;
    reply.header('Preference-Applied', 'return=representation');
    return reply.type(contentType(format)).send(joinObject(head, text));
  }

  private async remove(
    request: FastifyRequest,
    reply: FastifyReply,
    set: ODataSet | undefined,
    table: string,
    predicate: readonly PredicatePart[],
  ): Promise<FastifyReply> {
    const answered = await this.handler.handle(
      {
        kind: 'delete',
        table,
        request: () => ({
          target: this.targetOf(set, table, predicate),
          preferences: NO_PREFERENCES,
          ifMatch: parseEntityTags(request.headers['if-match']),
        }),
      },
      request.access,
      request,
    );
    if (answered.result.affectedRows === 0) throw rowNotFound(table);
    return reply.code(204).send();
  }

  /** The rows an update or delete of one entity changes. */
  private targetOf(
    set: ODataSet | undefined,
    table: string,
    predicate: readonly PredicatePart[],
  ): WriteTarget {
    return entityTarget(set, table, predicate);
  }

  /** `GET /odata/<function>(a=1,b='x')`: `{"@odata.context", "value"}` (204 for null). */
  private async callFunction(
    request: FastifyRequest,
    reply: FastifyReply,
    model: ODataModel,
    name: string,
    predicate: readonly PredicatePart[],
  ): Promise<FastifyReply> {
    const fn = model.functions.get(name);
    if (fn === undefined) throw routeNotFound(request.method, request.url);
    const format = dataFormat(queryValue(request.query, '$format'), request.headers.accept);
    const { text } = await this.handler.handle(
      {
        kind: 'call',
        routine: fn.routine.name,
        request: () => {
          const query: Record<string, string> = {};
          for (const part of predicate) {
            if (part.name === null) {
              throw invalidQuery(`A function's parameters are named: ${name}(a=1,b='x')`);
            }
            if (part.text.startsWith('@')) {
              throw odataUnsupported(
                `Parameter aliases such as '${excerpt(part.text)}' are not served`,
              );
            }
            const parameter = fn.parameter.get(part.name);
            query[parameter?.parameter.name ?? decodeName(part.name) ?? part.name] = argumentText(
              part.text,
            );
          }
          return { query };
        },
      },
      request.access,
      request,
    );
    const prefix = '{"success":true,"value":';
    let value = text.startsWith(prefix) ? text.slice(prefix.length, -1) : 'null';
    if (value === 'null') return reply.code(204).send();
    const returns = fn.routine.returns;
    if (returns !== null) {
      const edm = COLUMN_KINDS[returns.kind].edm.value(returns, format.ieee754);
      if (edm !== null) value = edm(value);
    }
    const head =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${this.root(request)}/$metadata#${fn.returns?.name ?? 'Edm.String'}`)},`;
    return reply.type(contentType(format)).send(`{${head}"value":${value}}`);
  }

  /** `POST /odata/<procedure>` with its parameters: `{"results", "out"}` as `/rpc/` gives them. */
  private async callAction(
    request: FastifyRequest,
    reply: FastifyReply,
    routine: string,
  ): Promise<FastifyReply> {
    const { text } = await this.handler.handle(
      {
        kind: 'call',
        routine,
        request: () => ({ body: parametersBody(request.body ?? {}) }),
      },
      request.access,
      request,
    );
    const prefix = '{"success":true,';
    return reply
      .type('application/json;odata.metadata=minimal;charset=utf-8')
      .send(text.startsWith(prefix) ? `{${text.slice(prefix.length)}` : text);
  }
}

/**
 * An entity's tag (docs/odata.md, "ETags"): its row's tag as the key read
 * `read(<key>,<value>)` gives it, without options — what If-Match on its update or delete is
 * checked against (pipeline/precondition.ts), so the one tag serves REST and OData alike.
 */
const entityTag = (read: CompiledRead, row: unknown[]): string => etagOf(read.serialize(row));

/** A key's read with its `$select` and `$expand` left out: the whole row, by the key's filter. */
const filterOnly = (operation: { request: () => ReadQuery }): QueryObject => {
  const { $filter, $top } = operation.request().query;
  return { $filter, $top };
};

/**
 * A collection's answer (a set, its `$count`, a to-many navigation) as REST's reads answer
 * (docs/caching.md): a strong ETag, the SHA-1 of exactly these bytes (which hold `@odata.count`
 * and `@odata.nextLink`), and 304 with no body when If-None-Match names it.
 */
function tagged(reply: FastifyReply, type: string, text: string): FastifyReply {
  if (notModified(reply, etagOf(text))) return reply;
  return reply.type(type).send(text);
}

/** Every write reads its row back: its key makes the Location, and the answer shows it. */
const READ_BACK: Preferences = { ...NO_PREFERENCES, representation: true };

/** A function argument's literal as `/rpc/<function>?…` takes it: a string's text, else as written. */
function argumentText(text: string): string {
  const literal = parseLiteral(text);
  switch (literal.kind) {
    case 'string':
      return literal.value;
    case 'number':
      return literal.text;
    case 'boolean':
      return String(literal.value);
    default:
      return text;
  }
}

/** `{<head>,<the object's members>}`. */
function joinObject(head: string, object: string): string {
  if (head === '') return object;
  return object === '{}' ? `{${head}}` : `{${head},${object.slice(1)}`;
}

function predicateText(parts: readonly PredicatePart[]): string {
  return parts.map((p) => (p.name === null ? p.text : `${p.name}=${p.text}`)).join(',');
}

function queryValue(query: unknown, key: string): string | undefined {
  const value = (query as QueryObject)[key];
  return typeof value === 'string' ? value : value?.[0];
}

const url = (request: FastifyRequest): string => request.url;
