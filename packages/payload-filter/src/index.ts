export type { JsonValue } from './json-equal';
export {
  FILTER_OPERATORS,
  type FieldCondition,
  type FieldFilter,
  type FilterOperator,
  type PayloadFilter,
} from './payload-filter';
export {
  parsePayloadFilter,
  type FilterError,
  type ParsePayloadFilterOptions,
  type ParsePayloadFilterResult,
} from './parse-payload-filter';
export { matchPayload, type MatchResult } from './match-payload';
