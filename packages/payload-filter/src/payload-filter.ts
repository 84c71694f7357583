import type { JsonValue } from './json-equal';

export const FILTER_OPERATORS = ['in', 'not_in', 'exists'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export function isFilterOperator(key: string): key is FilterOperator {
  return (FILTER_OPERATORS as readonly string[]).includes(key);
}

/** A validated payload filter, built by `parsePayloadFilter`: every field must match (AND). */
export interface PayloadFilter {
  readonly fields: readonly FieldFilter[];
}

export interface FieldFilter {
  readonly key: string;
  readonly condition: FieldCondition;
}

/**
 * Either the operators applying to the field itself (a bare array of allowed values is `in`), ANDed, or a
 * filter over the field's own fields.
 */
export type FieldCondition =
  | {
      readonly kind: 'operators';
      readonly in?: readonly JsonValue[];
      readonly notIn?: readonly JsonValue[];
      readonly exists?: boolean;
    }
  | { readonly kind: 'nested'; readonly filter: PayloadFilter };
