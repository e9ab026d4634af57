// The service's entry point: `npm start`, the Docker image and `dispatch serve` run it. V8's
// compiled code is kept on disk between starts (in NODE_COMPILE_CACHE, or the system's temporary
// directory), which must be switched on before the service's modules load, hence the dynamic import.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { main } = await import('./service.ts');
await main();
