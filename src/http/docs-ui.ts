/**
 * The Swagger UI plugins of the docs page: auth mode's (first) and, in both modes, the one that
 * shows paths with names as written (last). They run in the browser: @fastify/swagger-ui writes
 * their source into the page's initializer (uiConfig functions are serialized with toString), so
 * each must use nothing outside its own body. In auth mode the page first shows the login
 * description (register, login, health and the Bearer scheme); once the page has a token — from
 * "Authorize" or from a successful "Try it out" of POST /auth/login — it fetches /openapi.json
 * with that token and shows every table. "Logout" goes back to the login description.
 */

/** The few parts of Swagger UI's plugin system the plugin uses. */
interface UiSystem {
  getConfigs(): { spec?: unknown };
  authActions: { authorize(payload: Record<string, unknown>): unknown };
  specActions: { updateSpec(text: string): void; updateUrl(url: string): void };
  specSelectors: {
    specJson(): { getIn(path: string[]): { toJS(): unknown } | undefined };
  };
  errActions: { newThrownErr(error: Error): void };
}

type Wrapper = (original: (...args: never[]) => unknown, system: UiSystem) => unknown;

interface LoginResponse {
  status?: number;
  body?: { token?: unknown };
  text?: string;
}

export function tablegateAuthPlugin(): {
  statePlugins: Record<string, { wrapActions: Record<string, Wrapper> }>;
} {
  const SCHEME = 'bearerAuth';
  const page = globalThis as unknown as { location: { href: string } };

  /** `../openapi.json` from the docs page, wherever the gateway is mounted. */
  function descriptionUrl(): string {
    const here = (page.location.href.split('#')[0] ?? '').split('?')[0] ?? '';
    return new URL('../openapi.json', here.endsWith('/') ? here : `${here}/`).href;
  }

  function showLogin(system: UiSystem): void {
    system.specActions.updateUrl('');
    system.specActions.updateSpec(JSON.stringify(system.getConfigs().spec));
  }

  async function showEverything(system: UiSystem, token: string): Promise<void> {
    const url = descriptionUrl();
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) {
      const error = new Error(`${url} answered ${response.status}: the token was not accepted`);
      system.errActions.newThrownErr(Object.assign(error, { source: 'fetch' }));
      return;
    }
    const text = await response.text();
    // The description's own URL is the base of "Try it out" requests when it names no server.
    system.specActions.updateUrl(url);
    system.specActions.updateSpec(text);
  }

  function bearerOf(payload: unknown): string | null {
    const entry = (payload as Record<string, { value?: unknown }> | null)?.[SCHEME];
    return typeof entry?.value === 'string' && entry.value !== '' ? entry.value : null;
  }

  function tokenOf(response: LoginResponse | undefined): string | null {
    if (response?.status !== 200) return null;
    let token = response.body?.token;
    if (token === undefined && typeof response.text === 'string') {
      try {
        token = (JSON.parse(response.text) as { token?: unknown }).token;
      } catch {
        return null;
      }
    }
    return typeof token === 'string' && token !== '' ? token : null;
  }

  return {
    statePlugins: {
      auth: {
        wrapActions: {
          authorize: (original, system) => (payload: unknown) => {
            const result = original(payload as never);
            const token = bearerOf(payload);
            if (token !== null) {
              showEverything(system, token).catch((error: Error) =>
                system.errActions.newThrownErr(error),
              );
            }
            return result;
          },
          logout: (original, system) => (names: unknown) => {
            const result = original(names as never);
            showLogin(system);
            return result;
          },
        },
      },
      spec: {
        wrapActions: {
          // A successful login through "Try it out" authorizes the page with its token.
          setResponse:
            (original, system) => (path: string, method: string, response: LoginResponse) => {
              const result = original(path as never, method as never, response as never);
              const token = path === '/auth/login' && method === 'post' ? tokenOf(response) : null;
              const schema = system.specSelectors
                .specJson()
                .getIn(['components', 'securitySchemes', SCHEME]);
              if (token !== null && schema) {
                system.authActions.authorize({
                  [SCHEME]: { name: SCHEME, schema: schema.toJS(), value: token },
                });
              }
              return result;
            },
        },
      },
    },
  };
}

/** What the path wrapper touches of an operation's properties (an Immutable.js Map). */
interface OperationProps {
  get(key: 'path'): string;
  set(key: 'path', value: string): OperationProps;
}

interface SummaryPathProps {
  readonly operationProps: OperationProps;
}

interface ReactSystem {
  React: { createElement(type: unknown, props: object): unknown };
}

/**
 * The Swagger UI plugin of both modes: an operation's path shows a table's or routine's name as
 * written (`/table/zip codes/read`, `/rpc/größe`) where the description has it percent-encoded,
 * as OpenAPI's path templating allows only URI characters in a path (docs/openapi.md). Only the
 * shown text changes: "Try it out" still builds its URL from the description's path. What would
 * read as more of the path stays encoded — `/`, `?`, `#`, `%`, `{`, `}` — and so do control and
 * spacing characters other than the space, which a reader could not see. Like the auth plugin,
 * it runs in the browser from its source text and uses nothing outside its own body.
 */
export function tablegatePathsPlugin(): {
  fn: { readablePath(path: string): string };
  wrapComponents: Record<string, (original: unknown, system: ReactSystem) => unknown>;
} {
  function readablePath(path: string): string {
    return path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(run);
      } catch {
        return run;
      }
      let shown = '';
      for (const character of decoded) {
        shown += /[/?#%{}]|\p{C}|[^\S ]/u.test(character)
          ? encodeURIComponent(character)
          : character;
      }
      return shown;
    });
  }

  return {
    fn: { readablePath },
    wrapComponents: {
      OperationSummaryPath: (original, system) => (props: SummaryPathProps) =>
        system.React.createElement(original, {
          ...props,
          operationProps: props.operationProps.set(
            'path',
            readablePath(props.operationProps.get('path')),
          ),
        }),
    },
  };
}
