// The platform harness lives in @conveyor/testing so benchmarks start the services the same way.
export { startPlatform, runCli, type RunningPlatform } from '@conveyor/testing';
