/**
 * `$metadata` (docs/odata.md): the role's OData model (model.ts) as CSDL XML, or as CSDL JSON,
 * both in pieces, one per entity type, so that a server can send a description of thousands of
 * tables between other requests (odata/service-cache.ts). One schema, namespace `tablegate`:
 * an entity type per set (its name the set's), the functions and actions, and the container.
 */
import type { EdmType } from '../types/edm.js';
import {
  NAMESPACE,
  type ODataModel,
  type ODataNavigation,
  type ODataRoutine,
  type ODataSet,
} from './model.js';

const XML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};
const XML_SPECIAL = /[&<>"']/;

/** OData names never hold these characters: for nearly every value the test alone runs. */
const escapeXml = (text: string): string =>
  XML_SPECIAL.test(text) ? text.replace(/[&<>"']/g, (c) => XML_ENTITIES[c] as string) : text;

const attr = (name: string, value: string | number): string =>
  ` ${name}="${escapeXml(String(value))}"`;

function facetsXml(edm: EdmType, nullable: boolean): string {
  let text = attr('Type', edm.name);
  if (!nullable) text += attr('Nullable', 'false');
  if (edm.maxLength !== undefined) text += attr('MaxLength', edm.maxLength);
  if (edm.precision !== undefined && (edm.name === 'Edm.Decimal' || edm.precision > 0)) {
    text += attr('Precision', edm.precision);
  }
  if (edm.scale !== undefined) text += attr('Scale', edm.scale);
  if (edm.srid !== undefined) text += attr('SRID', edm.srid);
  return text;
}

const typeName = (set: ODataSet): string => `${NAMESPACE}.${set.name}`;

function navigationType(model: ODataModel, navigation: ODataNavigation): string {
  const target = model.sets.get(navigation.target) as ODataSet;
  return navigation.relation.kind === 'one' ? typeName(target) : `Collection(${typeName(target)})`;
}

/** Whether a to-one navigation always finds a row: every key column NOT NULL. */
const required = (navigation: ODataNavigation): boolean =>
  navigation.relation.on.every(({ local }) => !local.nullable);

function entityTypeXml(model: ODataModel, set: ODataSet): string {
  let text = `<EntityType${attr('Name', set.name)}><Key>`;
  for (const key of set.key) text += `<PropertyRef${attr('Name', key.name)}/>`;
  text += '</Key>';
  for (const property of set.properties) {
    text += `<Property${attr('Name', property.name)}${facetsXml(property.edm, property.column.nullable)}/>`;
  }
  for (const navigation of set.navigation) {
    const target = model.sets.get(navigation.target) as ODataSet;
    text += `<NavigationProperty${attr('Name', navigation.name)}${attr('Type', navigationType(model, navigation))}`;
    if (navigation.relation.kind === 'many') {
      text += '/>';
      continue;
    }
    if (required(navigation)) text += attr('Nullable', 'false');
    text += '>';
    for (const { local, remote } of navigation.relation.on) {
      const from = set.column.get(local.name);
      const to = target.column.get(remote.name);
      if (from !== undefined && to !== undefined) {
        text += `<ReferentialConstraint${attr('Property', from.name)}${attr('ReferencedProperty', to.name)}/>`;
      }
    }
    text += '</NavigationProperty>';
  }
  return `${text}</EntityType>`;
}

function routineXml(routine: ODataRoutine, element: 'Function' | 'Action'): string {
  let text = `<${element}${attr('Name', routine.name)}>`;
  for (const parameter of routine.parameters) {
    text += `<Parameter${attr('Name', parameter.name)}${facetsXml(parameter.edm, true)}/>`;
  }
  if (routine.returns !== null) text += `<ReturnType${facetsXml(routine.returns, true)}/>`;
  return `${text}</${element}>`;
}

function entitySetXml(set: ODataSet): string {
  let text = `<EntitySet${attr('Name', set.name)}${attr('EntityType', typeName(set))}`;
  if (set.navigation.length === 0) return `${text}/>`;
  text += '>';
  for (const navigation of set.navigation) {
    text += `<NavigationPropertyBinding${attr('Path', navigation.name)}${attr('Target', navigation.target)}/>`;
  }
  return `${text}</EntitySet>`;
}

/** A piece is given out once it is this long (a schema of thousands of sets is many pieces). */
const PIECE_CHARS = 16_384;

/** CSDL XML in pieces: the head, one piece per entity type, the rest. */
export function* csdlXml(model: ODataModel): Generator<string> {
  yield '<?xml version="1.0" encoding="utf-8"?>' +
    '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">' +
    `<edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm"${attr('Namespace', NAMESPACE)}>`;
  for (const set of model.sets.values()) yield entityTypeXml(model, set);
  let text = '';
  for (const routine of model.functions.values()) text += routineXml(routine, 'Function');
  for (const routine of model.actions.values()) text += routineXml(routine, 'Action');
  yield text;
  text = `<EntityContainer${attr('Name', model.container)}>`;
  for (const set of model.sets.values()) {
    text += entitySetXml(set);
    if (text.length > PIECE_CHARS) {
      yield text;
      text = '';
    }
  }
  for (const routine of model.functions.values()) {
    text += `<FunctionImport${attr('Name', routine.name)}${attr('Function', `${NAMESPACE}.${routine.name}`)}${attr('IncludeInServiceDocument', 'true')}/>`;
  }
  for (const routine of model.actions.values()) {
    text += `<ActionImport${attr('Name', routine.name)}${attr('Action', `${NAMESPACE}.${routine.name}`)}/>`;
  }
  yield `${text}</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`;
}

type Json = { [key: string]: unknown };

function facetsJson(edm: EdmType, nullable: boolean): Json {
  const json: Json = {};
  if (edm.name !== 'Edm.String') json.$Type = edm.name;
  if (nullable) json.$Nullable = true;
  if (edm.maxLength !== undefined) json.$MaxLength = edm.maxLength;
  // CSDL JSON reads a temporal type without $Precision as any precision; XML's default is 0.
  if (edm.precision !== undefined) json.$Precision = edm.precision;
  if (edm.scale !== undefined) json.$Scale = edm.scale;
  if (edm.srid !== undefined) json.$SRID = edm.srid;
  return json;
}

function entityTypeJson(model: ODataModel, set: ODataSet): Json {
  const json: Json = { $Kind: 'EntityType', $Key: set.key.map((key) => key.name) };
  for (const property of set.properties) {
    json[property.name] = facetsJson(property.edm, property.column.nullable);
  }
  for (const navigation of set.navigation) {
    const target = model.sets.get(navigation.target) as ODataSet;
    const nav: Json = { $Kind: 'NavigationProperty' };
    if (navigation.relation.kind === 'many') {
      nav.$Collection = true;
      nav.$Type = typeName(target);
    } else {
      nav.$Type = typeName(target);
      if (!required(navigation)) nav.$Nullable = true;
      const constraint: Json = {};
      for (const { local, remote } of navigation.relation.on) {
        const from = set.column.get(local.name);
        const to = target.column.get(remote.name);
        if (from !== undefined && to !== undefined) constraint[from.name] = to.name;
      }
      if (Object.keys(constraint).length > 0) nav.$ReferentialConstraint = constraint;
    }
    json[navigation.name] = nav;
  }
  return json;
}

function routineJson(routine: ODataRoutine, kind: 'Function' | 'Action'): Json[] {
  const json: Json = { $Kind: kind };
  if (routine.parameters.length > 0) {
    json.$Parameter = routine.parameters.map((p) => ({
      $Name: p.name,
      ...facetsJson(p.edm, true),
    }));
  }
  if (routine.returns !== null) json.$ReturnType = facetsJson(routine.returns, true);
  return [json];
}

/**
 * CSDL JSON in pieces, as JSON.stringify writes the whole document: the head, one piece per
 * entity type, the routines, the container. Written member by member, each member's value by
 * JSON.stringify: every name of a level is unique (model.ts keeps routines and the container
 * apart from the sets) and none is an integer, so the members stand in the order they are added.
 */
export function* csdlJson(model: ODataModel): Generator<string> {
  let comma = '';
  const member = (name: string, value: unknown): string => {
    const text = `${comma}${JSON.stringify(name)}:${JSON.stringify(value)}`;
    comma = ',';
    return text;
  };
  yield `{"$Version":"4.0","$EntityContainer":${JSON.stringify(`${NAMESPACE}.${model.container}`)},${JSON.stringify(NAMESPACE)}:{`;
  for (const set of model.sets.values()) yield member(set.name, entityTypeJson(model, set));
  let text = '';
  for (const routine of model.functions.values()) {
    text += member(routine.name, routineJson(routine, 'Function'));
  }
  for (const routine of model.actions.values()) {
    text += member(routine.name, routineJson(routine, 'Action'));
  }
  text += `${comma}${JSON.stringify(model.container)}:{"$Kind":"EntityContainer"`;
  comma = ',';
  for (const set of model.sets.values()) {
    const entry: Json = { $Collection: true, $Type: typeName(set) };
    if (set.navigation.length > 0) {
      entry.$NavigationPropertyBinding = Object.fromEntries(
        set.navigation.map((n) => [n.name, n.target]),
      );
    }
    text += member(set.name, entry);
    if (text.length > PIECE_CHARS) {
      yield text;
      text = '';
    }
  }
  for (const routine of model.functions.values()) {
    text += member(routine.name, {
      $Function: `${NAMESPACE}.${routine.name}`,
      $IncludeInServiceDocument: true,
    });
  }
  for (const routine of model.actions.values()) {
    text += member(routine.name, { $Action: `${NAMESPACE}.${routine.name}` });
  }
  yield `${text}}}}`;
}

/** The service document's `value`: every entity set and function import (OData JSON §5). */
export function serviceEntries(model: ODataModel): Json[] {
  const entries: Json[] = [];
  for (const set of model.sets.values()) {
    entries.push({ name: set.name, kind: 'EntitySet', url: set.name });
  }
  for (const routine of model.functions.values()) {
    entries.push({ name: routine.name, kind: 'FunctionImport', url: routine.name });
  }
  return entries;
}
