import { useResource } from './components';
import { Select } from './forms';
import type { EnvironmentList } from './types';

/** The environments the caller can reach, as a form's `environment_id` field; the first option sends none. */
export function EnvironmentSelect({ none, value }: { none: string; value?: string }) {
  const environments = useResource<EnvironmentList>('/agent/environments');
  return (
    <Select
      name="environment_id"
      label="Environment"
      value={value}
      options={[
        ['', none],
        ...(environments.data?.environments ?? []).map((e): [string, string] => [
          e.uid,
          e.config.name ?? e.uid,
        ]),
      ]}
    />
  );
}
