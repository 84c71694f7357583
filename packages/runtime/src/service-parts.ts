import type { Logger } from '@conveyor/logger';
import type { LoopHealth } from './background-loop';
import type { Readiness, ReadinessCheck } from './readiness';
import { closeAll } from './service-runner';

/** One thing a service starts and must stop: a connection, a server, a background loop, a consumer. */
export interface ServicePart {
  /** Named in /readyz (its check or its loop's health) and in the shutdown's steps. */
  name: string;
  start?(): unknown;
  stop(): unknown;
  /** A dependency the service cannot serve without: gates /readyz (and `conveyor_dependency_up`). */
  ready?: ReadinessCheck;
  /** A background loop's health: reported by /readyz, not gating. */
  health?(): LoopHealth;
  /**
   * Intake (servers, streams, consumers) stops first, in the order it was started, so no new work comes in while
   * the rest drains; everything else stops in reverse order of start, so nothing stops before what uses it.
   */
  intake?: boolean;
}

/** A part around a component that starts and stops itself (a loop, a listener, a consumer). */
export function partOf(
  name: string,
  component: { start?(): unknown; stop(): unknown },
  more: Omit<ServicePart, 'name' | 'start' | 'stop'> = {},
): ServicePart {
  return { name, start: () => component.start?.(), stop: () => component.stop(), ...more };
}

/** The same, reporting the health of the component's BackgroundLoop (`loop`) beside the readiness checks. */
export function loopPart(
  name: string,
  component: { start(): unknown; stop(): unknown; loop: { health(): LoopHealth } },
): ServicePart {
  return partOf(name, component, { health: () => component.loop.health() });
}

/**
 * The one list of a service's parts that readiness, metrics (through readiness) and shutdown iterate: a part is
 * registered before it starts, so a start that fails half-way stops exactly what it had begun.
 */
export class ServiceParts {
  private readonly parts: ServicePart[] = [];

  constructor(private readonly readiness: Readiness) {}

  async add<T extends ServicePart>(part: T): Promise<T> {
    this.parts.push(part);
    if (part.ready) this.readiness.add(part.name, part.ready);
    if (part.health) this.readiness.observe(part.name, { health: () => part.health!() });
    await part.start?.();
    return part;
  }

  /** Readiness off, then every part's stop in shutdown order, each on its own (one failure never skips the rest). */
  async stop(logger: Logger): Promise<void> {
    this.readiness.markStopping();
    const intake = this.parts.filter((part) => part.intake);
    const rest = this.parts.filter((part) => !part.intake).reverse();
    await closeAll(
      logger,
      [...intake, ...rest].map((part) => [part.name, () => part.stop()]),
    );
  }
}
