import { foo } from './foo';
import { bar } from './bar';
import { baz } from './baz';
import { qux } from './qux';