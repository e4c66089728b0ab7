/**
 * Spatial values both ways (docs/types.md): WKB (what ST_AsBinary gives, read by the select list
 * of sql/compile-read.ts) → GeoJSON geometry text (RFC 7946), and a GeoJSON geometry object of a
 * write → MySQL's internal geometry format (4 bytes of SRID, then little-endian WKB), which
 * MySQL and MariaDB store as it is when bound as a binary parameter. Coordinates are doubles
 * both ways, so nothing is rounded; only two dimensions (MySQL keeps no Z or M).
 */

/** The WKB type codes 1–7 and their GeoJSON names. */
const TYPE_NAMES = [
  '',
  'Point',
  'LineString',
  'Polygon',
  'MultiPoint',
  'MultiLineString',
  'MultiPolygon',
  'GeometryCollection',
] as const;

type GeometryType = Exclude<(typeof TYPE_NAMES)[number], ''>;

/** The GeoJSON type a spatial column takes, by information_schema DATA_TYPE; null for any. */
const COLUMN_TYPES: Readonly<Record<string, GeometryType | null>> = {
  geometry: null,
  point: 'Point',
  linestring: 'LineString',
  polygon: 'Polygon',
  multipoint: 'MultiPoint',
  multilinestring: 'MultiLineString',
  multipolygon: 'MultiPolygon',
  geometrycollection: 'GeometryCollection',
  geomcollection: 'GeometryCollection',
};

/** Whether an information_schema DATA_TYPE is a spatial type. */
export function isSpatialType(dataType: string): boolean {
  return dataType in COLUMN_TYPES;
}

/** The GeoJSON type names a column of `dataType` takes, for messages and the API description. */
export function geometryTypesOf(dataType: string): readonly GeometryType[] {
  const only = COLUMN_TYPES[dataType];
  return only === undefined || only === null ? (TYPE_NAMES.slice(1) as GeometryType[]) : [only];
}

/** Malformed WKB: MySQL never sends it, so this is a bug, not the client's error. */
class WkbError extends Error {}

/** A cursor over WKB bytes, each geometry with its own byte order. */
class WkbReader {
  private at = 0;
  private little = true;
  constructor(private readonly bytes: Buffer) {}

  get done(): boolean {
    return this.at === this.bytes.length;
  }

  private need(n: number): void {
    if (this.at + n > this.bytes.length) throw new WkbError('WKB ends early');
  }

  order(): void {
    this.need(1);
    const byte = this.bytes[this.at++];
    if (byte !== 0 && byte !== 1) throw new WkbError(`WKB byte order ${byte}`);
    this.little = byte === 1;
  }

  uint32(): number {
    this.need(4);
    const n = this.little ? this.bytes.readUInt32LE(this.at) : this.bytes.readUInt32BE(this.at);
    this.at += 4;
    return n;
  }

  double(): number {
    this.need(8);
    const n = this.little ? this.bytes.readDoubleLE(this.at) : this.bytes.readDoubleBE(this.at);
    this.at += 8;
    return n;
  }

  /** A count of items that must fit in the bytes left (each item takes at least `minBytes`). */
  count(minBytes: number): number {
    const n = this.uint32();
    if (n * minBytes > this.bytes.length - this.at) throw new WkbError('WKB count too large');
    return n;
  }
}

/** A double as JSON: the shortest text that reads back as the same double. */
function coordinate(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

function position(reader: WkbReader): string {
  const x = reader.double();
  const y = reader.double();
  return `[${coordinate(x)},${coordinate(y)}]`;
}

function positions(reader: WkbReader): string {
  const n = reader.count(16);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(position(reader));
  return `[${parts.join(',')}]`;
}

function rings(reader: WkbReader): string {
  const n = reader.count(4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(positions(reader));
  return `[${parts.join(',')}]`;
}

/** One geometry (with its byte order and type) as GeoJSON text. */
function geometry(reader: WkbReader, depth: number): string {
  reader.order();
  const code = reader.uint32();
  const type = TYPE_NAMES[code];
  if (type === undefined || type === '') throw new WkbError(`WKB type ${code}`);
  const head = `{"type":"${type}",`;
  switch (type) {
    case 'Point':
      return `${head}"coordinates":${position(reader)}}`;
    case 'LineString':
      return `${head}"coordinates":${positions(reader)}}`;
    case 'Polygon':
      return `${head}"coordinates":${rings(reader)}}`;
    case 'GeometryCollection': {
      if (depth > MAX_DEPTH) throw new WkbError('WKB nested too deep');
      const n = reader.count(5);
      const parts: string[] = [];
      for (let i = 0; i < n; i++) parts.push(geometry(reader, depth + 1));
      return `${head}"geometries":[${parts.join(',')}]}`;
    }
    default: {
      // Multi…: each member is a whole WKB geometry of the single type; only its coordinates stay.
      const n = reader.count(5);
      const parts: string[] = [];
      for (let i = 0; i < n; i++) {
        reader.order();
        reader.uint32();
        parts.push(
          type === 'MultiPoint'
            ? position(reader)
            : type === 'MultiLineString'
              ? positions(reader)
              : rings(reader),
        );
      }
      return `${head}"coordinates":[${parts.join(',')}]}`;
    }
  }
}

/** How deep GeometryCollections nest, reading or writing. */
const MAX_DEPTH = 32;

/** WKB bytes → GeoJSON geometry text. */
export function wkbToGeoJson(bytes: Buffer): string {
  const reader = new WkbReader(bytes);
  const text = geometry(reader, 0);
  if (!reader.done) throw new WkbError('bytes after the WKB geometry');
  return text;
}

// ---- GeoJSON → MySQL's internal format ------------------------------------------------------

/** Why a GeoJSON value was refused: the message says where in it. */
export class GeoJsonError extends Error {}

/** Bytes written little-endian into growing chunks. */
class WkbWriter {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  uint32(n: number): void {
    const chunk = Buffer.allocUnsafe(4);
    chunk.writeUInt32LE(n);
    this.push(chunk);
  }

  header(code: number): void {
    const chunk = Buffer.allocUnsafe(5);
    chunk.writeUInt8(1, 0);
    chunk.writeUInt32LE(code, 1);
    this.push(chunk);
  }

  point(x: number, y: number): void {
    const chunk = Buffer.allocUnsafe(16);
    chunk.writeDoubleLE(x, 0);
    chunk.writeDoubleLE(y, 8);
    this.push(chunk);
  }

  private push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A position: [x, y] of finite numbers (RFC 7946 §3.1.1; MySQL keeps no third coordinate). */
function writePosition(out: WkbWriter, value: unknown, where: string): void {
  if (!Array.isArray(value) || value.length < 2) {
    throw new GeoJsonError(`${where} must be a position [x, y]`);
  }
  if (value.length > 2) {
    throw new GeoJsonError(
      `${where} has ${value.length} coordinates; MySQL stores two (x, y), no elevation`,
    );
  }
  const [x, y] = value as unknown[];
  if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x + y)) {
    throw new GeoJsonError(`${where} must hold two numbers`);
  }
  out.point(x, y);
}

function arrayOf(value: unknown, where: string, what: string): unknown[] {
  if (!Array.isArray(value)) throw new GeoJsonError(`${where} must be an array of ${what}`);
  return value;
}

function writePositions(out: WkbWriter, value: unknown, where: string, min: number): void {
  const list = arrayOf(value, where, 'positions');
  if (list.length < min) throw new GeoJsonError(`${where} needs at least ${min} positions`);
  out.uint32(list.length);
  list.forEach((item, i) => {
    writePosition(out, item, `${where}[${i}]`);
  });
}

/** A linear ring: four or more positions, the last equal to the first (RFC 7946 §3.1.6). */
function writeRings(out: WkbWriter, value: unknown, where: string): void {
  const list = arrayOf(value, where, 'linear rings');
  if (list.length === 0) throw new GeoJsonError(`${where} needs at least one linear ring`);
  out.uint32(list.length);
  list.forEach((ring, i) => {
    const at = `${where}[${i}]`;
    writePositions(out, ring, at, 4);
    const first = (ring as unknown[])[0] as number[];
    const last = (ring as unknown[])[(ring as unknown[]).length - 1] as number[];
    if (first[0] !== last[0] || first[1] !== last[1]) {
      throw new GeoJsonError(`${at} is not closed: its last position must equal its first`);
    }
  });
}

const MEMBERS: Readonly<Record<GeometryType, 'coordinates' | 'geometries'>> = {
  Point: 'coordinates',
  LineString: 'coordinates',
  Polygon: 'coordinates',
  MultiPoint: 'coordinates',
  MultiLineString: 'coordinates',
  MultiPolygon: 'coordinates',
  GeometryCollection: 'geometries',
};

function writeGeometry(out: WkbWriter, value: unknown, where: string, depth: number): void {
  if (!isObject(value)) throw new GeoJsonError(`${where} must be a GeoJSON geometry object`);
  const type = value.type;
  const code = TYPE_NAMES.indexOf(type as GeometryType);
  if (typeof type !== 'string' || code < 1) {
    throw new GeoJsonError(
      `${where} must have a "type" of ${TYPE_NAMES.slice(1).join(', ')}${typeof type === 'string' ? `, not '${type.slice(0, 40)}'` : ''}`,
    );
  }
  const geometryType = type as GeometryType;
  const member = MEMBERS[geometryType];
  for (const key of Object.keys(value)) {
    if (key !== 'type' && key !== member && key !== 'bbox') {
      throw new GeoJsonError(
        `${where} has a member '${key.slice(0, 40)}' that a ${geometryType} does not take`,
      );
    }
  }
  const content = value[member];
  const at = `${where}.${member}`;
  out.header(code);
  switch (geometryType) {
    case 'Point':
      writePosition(out, content, at);
      return;
    case 'LineString':
      writePositions(out, content, at, 2);
      return;
    case 'Polygon':
      writeRings(out, content, at);
      return;
    case 'GeometryCollection': {
      if (depth >= MAX_DEPTH) {
        throw new GeoJsonError(`${where} nests GeometryCollections deeper than ${MAX_DEPTH}`);
      }
      const list = arrayOf(content, at, 'geometry objects');
      out.uint32(list.length);
      list.forEach((item, i) => {
        writeGeometry(out, item, `${at}[${i}]`, depth + 1);
      });
      return;
    }
    default: {
      const list = arrayOf(content, at, 'coordinates');
      out.uint32(list.length);
      list.forEach((item, i) => {
        const part = `${at}[${i}]`;
        if (geometryType === 'MultiPoint') {
          out.header(1);
          writePosition(out, item, part);
        } else if (geometryType === 'MultiLineString') {
          out.header(2);
          writePositions(out, item, part, 2);
        } else {
          out.header(3);
          writeRings(out, item, part);
        }
      });
    }
  }
}

/**
 * A GeoJSON geometry object → MySQL's internal geometry bytes for a column of `dataType` whose
 * values carry `srid`. Throws GeoJsonError saying what is wrong, where (`where` names the value).
 */
export function geoJsonToGeometry(
  value: unknown,
  dataType: string,
  srid: number,
  where: string,
): Buffer {
  const takes = COLUMN_TYPES[dataType] ?? null;
  if (takes !== null && isObject(value) && typeof value.type === 'string' && value.type !== takes) {
    throw new GeoJsonError(
      `${where} is a ${dataType.toUpperCase()} column and takes a GeoJSON ${takes}, not a ${value.type.slice(0, 40)}`,
    );
  }
  const out = new WkbWriter();
  writeGeometry(out, value, where, 0);
  const wkb = out.bytes();
  const bytes = Buffer.allocUnsafe(4 + wkb.length);
  bytes.writeUInt32LE(srid, 0);
  wkb.copy(bytes, 4);
  return bytes;
}
