import type { DynamicModule, Type } from '@nestjs/common';
import type { ProcessRole } from '../platform/config/config.js';
import type { Projection } from '../platform/projections/projection.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { allProjections } from '../../projections/index.js';

/** The bounded contexts this process's role serves. Every role gets health routes. */
export function contextModules(role: ProcessRole): Array<Type | DynamicModule> {
  const modules: Array<Type | DynamicModule> = [TenancyModule];
  void role;
  return modules;
}

export function projections(): Projection[] {
  return allProjections;
}
