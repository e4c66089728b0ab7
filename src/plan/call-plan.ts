/**
 * A routine call's arguments against the routine (docs/routines.md): a JSON object of its IN and
 * INOUT parameters by name, or a function's query string; every one required, none unknown, and
 * each value coerced as a write's value for a column of the parameter's type (types/value-codec.ts),
 * so what reaches MySQL is exactly what was sent. Pure: tested with routine fixtures.
 */
import type { ParameterInfo, RoutineInfo } from '../db/routines.js';
import {
  ApiError,
  invalidArguments,
  invalidBody,
  invalidValue,
  missingParameter,
  unknownParameter,
} from '../errors.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { coerceValue, describeValue, type WriteParam } from '../types/value-codec.js';

export interface CallPlan {
  readonly routine: RoutineInfo;
  /** One value per IN and INOUT parameter, in declaration order. */
  readonly inputs: readonly WriteParam[];
}

const isSent = (parameter: ParameterInfo) => parameter.mode !== 'out';

/**
 * The value codec names a column (`Column 'x' takes …`); an argument is a parameter's value, and
 * its messages say so.
 */
function coerceArgument(parameter: ParameterInfo, value: unknown): WriteParam {
  try {
    return coerceValue(parameter.column, value);
  } catch (error) {
    const prefix = `Column '${parameter.name}'`;
    if (error instanceof ApiError && error.message.startsWith(prefix)) {
      throw invalidValue(`Parameter '${parameter.name}'${error.message.slice(prefix.length)}`);
    }
    throw error;
  }
}

/** The arguments named in `given` (own keys only), checked against the routine's parameters. */
function planArguments(
  routine: RoutineInfo,
  given: Readonly<Record<string, unknown>>,
  value: (parameter: ParameterInfo, given: unknown) => unknown,
): CallPlan {
  for (const key of Object.keys(given)) {
    const parameter = routine.parameters.find((p) => p.name === key);
    if (parameter === undefined) throw unknownParameter(routine.name, key);
    if (!isSent(parameter)) {
      throw unknownParameter(
        routine.name,
        key,
        `: '${key}' is an OUT parameter, whose value comes back in "out"`,
      );
    }
  }
  const inputs: WriteParam[] = [];
  for (const parameter of routine.parameters) {
    if (!isSent(parameter)) continue;
    if (!Object.hasOwn(given, parameter.name)) throw missingParameter(routine.name, parameter.name);
    inputs.push(coerceArgument(parameter, value(parameter, given[parameter.name])));
  }
  return { routine, inputs };
}

/** A JSON body: one object of the IN and INOUT parameters by name (absent: no arguments). */
export function planCallBody(routine: RoutineInfo, body: unknown): CallPlan {
  const given = body === undefined ? {} : body;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw invalidBody(
      `The body must be a JSON object of the routine's parameters by name, not ${describeValue(given)}`,
    );
  }
  return planArguments(routine, given as Record<string, unknown>, (_parameter, value) => value);
}

/**
 * A function's query string: each parameter once, its value as text (what a JSON string would
 * carry), a JSON parameter's as JSON text. NULL needs the JSON body of a POST.
 */
export function planCallQuery(
  routine: RoutineInfo,
  query: Readonly<Record<string, string | string[] | undefined>>,
): CallPlan {
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) {
      throw invalidArguments(`Parameter '${key}' is given more than once`);
    }
    if (value !== undefined) given[key] = value;
  }
  return planArguments(routine, given, (parameter, value) =>
    COLUMN_KINDS[parameter.column.kind].takesObjects ? jsonText(parameter, String(value)) : value,
  );
}

function jsonText(parameter: ParameterInfo, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidValue(`Parameter '${parameter.name}' takes JSON text, and this is not JSON`);
  }
}
