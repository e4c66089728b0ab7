/** Stops the private server or container global-setup started, if any. */
const state = globalThis as typeof globalThis & { tablegateTestCleanup?: () => Promise<unknown> };

export default async function globalTeardown(): Promise<void> {
  await state.tablegateTestCleanup?.();
}
