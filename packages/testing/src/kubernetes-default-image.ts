/**
 * The run image the deployed chart gives environments that name none (its ConfigMap's SANDBOX_K8S_DEFAULT_IMAGE):
 * what a warm pool must hold for the runs of a test or bench. `kubectl` runs in the chart's namespace.
 */
export function chartDefaultImage(kubectl: (...args: string[]) => Promise<string>): Promise<string> {
  return kubectl('get', 'configmap', 'conveyor-config', '-o', 'jsonpath={.data.SANDBOX_K8S_DEFAULT_IMAGE}');
}
