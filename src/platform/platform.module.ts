import { type DynamicModule, Global, Module } from '@nestjs/common';
import { PLATFORM, type Platform } from './platform.js';

/** Makes the process's Platform (ports and shared services) injectable as PLATFORM. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(platform: Platform): DynamicModule {
    return { module: PlatformModule, providers: [{ provide: PLATFORM, useValue: platform }], exports: [PLATFORM] };
  }
}
