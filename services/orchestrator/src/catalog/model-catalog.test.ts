import { AppError } from '@conveyor/errors';
import { BUILT_IN_MODEL_CATALOG, ModelCatalog } from './model-catalog';

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_request');
    return (err as AppError).message;
  }
  throw new Error('expected a 400');
};

describe('model catalog per harness', () => {
  const catalog = new ModelCatalog(BUILT_IN_MODEL_CATALOG);

  it("offers each model to the CLI harness speaking its provider's API, and any model to demo and command harnesses", () => {
    expect(catalog.usableBy('claude').map((m) => m.id)).toEqual(['claude-sonnet-4', 'claude-opus-4']);
    expect(catalog.usableBy('codex').map((m) => m.id)).toEqual(['gpt-5']);
    expect(catalog.usableBy('gemini').map((m) => m.id)).toEqual(['gemini-2.5-pro']);
    expect(catalog.resolve('gpt-5').id).toBe('gpt-5');
  });

  it("defaults to the catalog default when the harness can use it, else to the harness's first model", () => {
    expect(catalog.resolve(undefined).id).toBe('claude-sonnet-4');
    expect(catalog.resolve(undefined, 'claude').id).toBe('claude-sonnet-4');
    expect(catalog.resolve('', 'codex').id).toBe('gpt-5');
    expect(catalog.resolve(undefined, 'gemini').id).toBe('gemini-2.5-pro');
  });

  it('refuses a model the chosen harness cannot use, naming the ones it can', () => {
    expect(reason(() => catalog.resolve('gpt-5', 'claude'))).toBe(
      'Model "gpt-5" cannot be used with the claude harness; models for it: claude-sonnet-4, claude-opus-4',
    );
    expect(reason(() => catalog.resolve('nope', 'claude'))).toMatch(/Unknown model "nope"/);
  });

  it("lets the operator list a model's harnesses and set a run budget", () => {
    const custom = new ModelCatalog({
      run_budget_usd: 2.5,
      models: [
        { id: 'qwen-coder', provider: 'self-hosted', harnesses: ['codex'] },
        { id: 'claude-haiku', provider: 'anthropic', disabled: true },
      ],
    });
    expect(custom.runBudgetUsd).toBe(2.5);
    expect(custom.resolve(undefined, 'codex').id).toBe('qwen-coder');
    expect(reason(() => custom.resolve(undefined, 'claude'))).toMatch(
      /offers no model for the claude harness/,
    );
    expect(() => new ModelCatalog({ models: [{ id: 'x', provider: 'p', harnesses: ['oz'] }] })).toThrow(
      /invalid model catalog/,
    );
  });
});
