# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find formatPercent function)
# workdir: bug-investigation/project
grep -n "formatPercent" src/utils/format.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find BUG comments in code)
# workdir: bug-investigation/project
# order: unspecified
grep -r "BUG:" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find validatePrice function)
# workdir: bug-investigation/project
grep -n "validatePrice" src/utils/validate.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find test for formatPercent)
# workdir: bug-investigation/project
grep -n "formatPercent" tests/format.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should count BUG comments)
# workdir: bug-investigation/project
# order: unspecified
grep -r -c "BUG:" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should find all Open bugs in report)
# workdir: bug-investigation/project
grep "Status: Open" BUGS.md
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/bug-investigation.test.ts (should count open bugs)
# workdir: bug-investigation/project
grep -c "Status: Open" BUGS.md
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should find TODO comments)
# workdir: code-review/project
# order: unspecified
grep -r TODO src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should find FIXME comments)
# workdir: code-review/project
# order: unspecified
grep -r FIXME src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should check for hardcoded port)
# workdir: code-review/project
grep -n 3000 src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should find all exported functions)
# workdir: code-review/project
grep "^export" src/user.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/code-review.test.ts (should count TODO items)
# workdir: code-review/project
# order: unspecified
grep -r -c TODO src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should find all class definitions)
# workdir: monorepo/repo
# order: unspecified
grep -r "^export class" packages/core/src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should find package dependencies on core)
# workdir: monorepo/repo
# order: unspecified
grep -r "@app/core" packages
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should find all imports of Database)
# workdir: monorepo/repo
# order: unspecified
grep -r "Database" packages
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/codebase-exploration.test.ts (should find React components)
# workdir: monorepo/repo
# order: unspecified
grep -r "function App" packages/web
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should find port configurations)
# workdir: config-analysis/app
grep "port" config/default.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should find all database hosts across configs)
# workdir: config-analysis/app
# order: unspecified
grep -r "host" config
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should find cache settings)
# workdir: config-analysis/app
# order: unspecified
grep -r "enabled" config
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should find DATABASE_URL across env files)
# workdir: config-analysis/app
grep DATABASE_URL .env.example .env.production
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should find differences in port settings)
# workdir: config-analysis/app
grep 3000 config/default.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/config-analysis.test.ts (should verify production uses different port)
# workdir: config-analysis/app
grep 8080 config/production.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should extract error messages from logs)
# workdir: debugging/app
grep "^Error:" logs/error.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find unique error types)
# workdir: debugging/app
grep "ERROR:" logs/error.log | cut -d":" -f4 | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should extract file paths from stack traces)
# workdir: debugging/app
grep -o "src/[^)]*" logs/error.log | cut -d":" -f1 | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find the most common error location)
# workdir: debugging/app
grep -o "at [A-Za-z.]*" logs/error.log | sort | uniq -c | sort -rn | head -3
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find where PaymentValidator.validate is defined)
# workdir: debugging/app
grep -n "validate(" src/validators/payment.ts | head -1
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should trace the payment validation flow)
# workdir: debugging/app
grep -n "validator.validate" src/services/payment.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should trace the payment validation flow)
# workdir: debugging/app
grep -n "paymentService.charge" src/services/order.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find all throw statements in order service)
# workdir: debugging/app
grep -n "throw" src/services/order.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find all error logging statements)
# workdir: debugging/app
# order: unspecified
grep -rn "logger.error" src --include="*.ts"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find try-catch blocks in services)
# workdir: debugging/app
grep -c "try {" src/services/*.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should analyze the order processing flow)
# workdir: debugging/app
grep -A 30 "async processOrder" src/services/order.ts | grep -E "this\.|await "
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find all service dependencies in order service)
# workdir: debugging/app
grep "^import" src/services/order.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find validation error messages)
# workdir: debugging/app
grep "error:" src/validators/payment.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/debugging-workflow.test.ts (should find all files that import the order service)
# workdir: debugging/app
# order: unspecified
grep -rl "OrderService" src --include="*.ts"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find all import statements in the codebase)
# workdir: dependency-analysis/project
grep -rh "^import" src | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find all export statements)
# workdir: dependency-analysis/project
grep -rh "^export" src | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find which modules import logger)
# workdir: dependency-analysis/project
grep -rl "import.*logger" src --include="*.ts" | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find which modules import Database)
# workdir: dependency-analysis/project
grep -rl "import.*Database" src --include="*.ts" | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find unused exports (exports not imported elsewhere))
# workdir: dependency-analysis/project
grep "FeatureFlags" src/config.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find unused exports (exports not imported elsewhere))
# workdir: dependency-analysis/project
# order: unspecified
grep -r "FeatureFlags" src --include="*.ts" | grep -v config.ts || echo "Not imported"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find unused helper functions)
# workdir: dependency-analysis/project
# order: unspecified
grep -r "debounce" src --include="*.ts" | grep -v helpers.ts || echo "Not used"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should map the dependency tree from index.ts)
# workdir: dependency-analysis/project
grep "^import" src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should map the dependency tree from index.ts)
# workdir: dependency-analysis/project
grep "^import" src/app.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find potential circular dependencies)
# workdir: dependency-analysis/project
grep -i "config" src/utils/logger.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find potential circular dependencies)
# workdir: dependency-analysis/project
grep "logger" src/config.ts || echo "No circular dependency"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should count imports per module to find highly coupled modules)
# workdir: dependency-analysis/project
# order: unspecified
grep -rc "^import" src --include="*.ts" | sort -t: -k2 -rn | head -5
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find all model type definitions)
# workdir: dependency-analysis/project
# order: unspecified
grep -rn "^export interface\|^export type" src/models
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should identify the utils directory as a shared dependency hub)
# workdir: dependency-analysis/project
grep -rl "from.*utils" src | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/dependency-analysis.test.ts (should find controllers and their database dependencies)
# workdir: dependency-analysis/project
grep -l "Database" src/controllers/*.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find all skipped tests)
# workdir: feature-implementation/project
# order: unspecified
grep -rn "it.skip" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should identify specific issues from skip comments)
# workdir: feature-implementation/project
grep -B1 "it.skip" src/comparison-tests/ls.comparison.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should understand what compareOutputs does)
# workdir: feature-implementation/project
grep -A5 "compareOutputs" src/comparison-tests/test-helpers.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find relevant flags handling)
# workdir: feature-implementation/project
grep -n "showAll\|showHidden" src/commands/ls/ls.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find TODO comments in implementation)
# workdir: feature-implementation/project
grep -n "TODO" src/commands/ls/ls.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should locate command registration)
# workdir: feature-implementation/project
grep -n "registerCommand" src/BashEnv.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find TODO for missing commands)
# workdir: feature-implementation/project
grep -n "TODO.*command" src/BashEnv.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find files that use ls flags)
# workdir: feature-implementation/project
# order: unspecified
grep -rl "ls -a\|ls -A" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find unit tests to update)
# workdir: feature-implementation/project
grep -n "should.*-a" src/commands/ls/ls.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find TODO for missing methods)
# workdir: feature-implementation/project
grep -n "TODO" src/fs.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should understand test structure)
# workdir: feature-implementation/project
grep -n "describe\|it(" src/commands/ls/ls.test.ts | head -10
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find assertions in tests)
# workdir: feature-implementation/project
grep -n "expect" src/commands/ls/ls.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should trace the full implementation path)
# workdir: feature-implementation/project
grep -c "it.skip" src/comparison-tests/ls.comparison.test.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should trace the full implementation path)
# workdir: feature-implementation/project
grep -c "TODO" src/commands/ls/ls.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find all files needing modification)
# workdir: feature-implementation/project
# order: unspecified
grep -rl "it.skip" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find all files needing modification)
# workdir: feature-implementation/project
# order: unspecified
grep -rl "TODO" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find async execute pattern)
# workdir: feature-implementation/project
# order: unspecified
grep -rn "async execute" src/commands
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find Command interface implementations)
# workdir: feature-implementation/project
# order: unspecified
grep -rn "Command = {" src/commands
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/feature-implementation.test.ts (should find error handling patterns)
# workdir: feature-implementation/project
# order: unspecified
grep -rn "catch" src/commands
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find all ERROR entries in app log)
# workdir: log-analysis/logs
grep ERROR app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find all WARN entries in app log)
# workdir: log-analysis/logs
grep WARN app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should count errors)
# workdir: log-analysis/logs
grep -c ERROR app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find HTTP 500 errors in access log)
# workdir: log-analysis/logs
grep 500 access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should count failed login attempts (401))
# workdir: log-analysis/logs
grep -c 401 access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find requests from specific IP)
# workdir: log-analysis/logs
grep "192.168.1.100" access.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find errors using pipe)
# workdir: log-analysis/logs
cat app.log | grep ERROR
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should find specific timestamp range)
# workdir: log-analysis/logs
grep "10:10" app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should search case-insensitively for errors)
# workdir: log-analysis/logs
grep -i error app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/log-analysis.test.ts (should show line numbers for errors)
# workdir: log-analysis/logs
grep -n ERROR app.log
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should find all CommonJS require statements)
# workdir: module-migration/project
# order: unspecified
grep -rn "require(" src --include="*.js"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should find all module.exports statements)
# workdir: module-migration/project
# order: unspecified
grep -rn "module.exports" src --include="*.js"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should identify external vs internal dependencies)
# workdir: module-migration/project
grep -rh "require(" src --include="*.js" | grep -v "require('\.\.\|require('\./" | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should find files with mixed export patterns)
# workdir: module-migration/project
grep -rl "module.exports =" src --include="*.js" | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should identify circular dependency risks)
# workdir: module-migration/project
grep -l "require.*logger" src/db.js
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should identify circular dependency risks)
# workdir: module-migration/project
grep -l "require.*logger" src/server.js
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should generate migration summary report)
# workdir: module-migration/project
grep -r "require(" src --include="*.js" | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should generate migration summary report)
# workdir: module-migration/project
grep -r "module.exports" src --include="*.js" | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/multi-file-migration.test.ts (should find relative imports that need extension updates)
# workdir: module-migration/project
grep -rh "require('\./\|require('../" src | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find all files containing the function to rename)
# workdir: rename-refactor/project
# order: unspecified
grep -r "formatUserName" src --include="*.ts" --include="*.tsx"
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should count occurrences per file)
# workdir: rename-refactor/project
# order: unspecified
grep -r -c "formatUserName" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find export statements to update)
# workdir: rename-refactor/project
# order: unspecified
grep -r "export.*formatUserName" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find import statements to update)
# workdir: rename-refactor/project
# order: unspecified
grep -r "import.*formatUserName" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find deprecated functions for cleanup)
# workdir: rename-refactor/project
# order: unspecified
grep -rn "_deprecated" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should analyze function usage patterns)
# workdir: rename-refactor/project
# order: unspecified
grep -r "formatUserName(" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should combine object properties on single line)
# workdir: sed-refactor/code
grep -A1 'name:' multiline.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should number only lines matching a pattern)
# workdir: sed-refactor/code
grep -n 'deprecated' deprecated.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find active functions (not deprecated))
# workdir: sed-refactor/code
grep 'function activeFunc' deprecated.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should identify deprecated functions)
# workdir: sed-refactor/code
grep -A2 '@deprecated' deprecated.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/refactoring-workflow.test.ts (should find functions that need documentation)
# workdir: sed-refactor/code
grep -n '^function' deprecated.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find hardcoded API keys and secrets)
# workdir: security-audit/app
grep -n "apiKey\|secret\|password" src/config.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find SQL injection vulnerabilities)
# workdir: security-audit/app
grep -n "SELECT.*\$" src/auth/login.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find dangerous eval usage)
# workdir: security-audit/app
# order: unspecified
grep -rn "eval(" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find XSS vulnerabilities with innerHTML)
# workdir: security-audit/app
# order: unspecified
grep -rn "innerHTML" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find missing authorization checks)
# workdir: security-audit/app
grep -B2 -A5 "function.*req.*res" src/api/users.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find sensitive data in .env file)
# workdir: security-audit/app
grep -n "KEY\|SECRET\|PASSWORD" .env
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should find hardcoded credentials in docker-compose)
# workdir: security-audit/app
grep -n "PASSWORD\|password" docker-compose.yml
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should check for vulnerable dependencies)
# workdir: security-audit/app
grep "lodash" package.json
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should generate security findings summary)
# workdir: security-audit/app
grep -r -c "eval(" src | grep -v ":0$" | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should generate security findings summary)
# workdir: security-audit/app
grep -r -c "innerHTML" src | grep -v ":0$" | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should generate security findings summary)
# workdir: security-audit/app
grep -rn "secret\|password\|apiKey" src/config.ts | wc -l
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should compare .env with .env.example for undocumented secrets)
# workdir: security-audit/app
grep -o '^[A-Z_]*' .env | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/security-audit.test.ts (should compare .env with .env.example for undocumented secrets)
# workdir: security-audit/app
grep -o '^[A-Z_]*' .env.example | sort
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find all TODO comments in codebase)
# workdir: grep-codebase/project
# order: unspecified
grep -r "TODO" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count TODOs per file)
# workdir: grep-codebase/project
grep -c "TODO" src/index.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find FIXMEs with line numbers)
# workdir: grep-codebase/project
# order: unspecified
grep -rn "FIXME" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find both TODO and FIXME)
# workdir: grep-codebase/project
# order: unspecified
grep -rE "TODO|FIXME" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find all import statements)
# workdir: grep-codebase/project
# order: unspecified
grep -r "^import" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find files importing Logger)
# workdir: grep-codebase/project
# order: unspecified
grep -rl "Logger" src
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find class definitions)
# workdir: grep-codebase/project
# order: unspecified
grep -r "^export class" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should show context around matches)
# workdir: grep-codebase/project
grep -A2 "async getUser" src/services/user.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should show context before matches)
# workdir: grep-codebase/project
grep -B1 "return this.db" src/services/user.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find all React components)
# workdir: react-hooks/project
# order: unspecified
grep -r "React.FC" src/
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should list all custom hooks)
# workdir: react-hooks/project
grep -l "^export function use" src/hooks/*.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find files with useEffect)
# workdir: react-hooks/project
grep -l "useEffect" src/hooks/*.ts
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should count interface definitions)
# workdir: react-hooks/project
grep -c "^interface" src/components/Button.tsx
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should find imports and sort uniquely)
# workdir: react-hooks/project
grep -h "^import" src/**/*.ts src/**/*.tsx | sort | uniq
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract prop types from components)
# workdir: react-hooks/project
grep -A5 '^interface.*Props' src/components/Button.tsx
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract database section from config)
# workdir: log-blocks
grep -A3 '\[database\]' logs/config.ini
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract cache settings)
# workdir: log-blocks
grep -A3 '\[cache\]' logs/config.ini
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract only digits from phone number)
# workdir: tr-sanitize/data
grep Phone user-input.txt | tr -cd '0-9\n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should extract IP address octets)
# workdir: tr-sanitize/data
grep host log-entry.txt | tr -cd '0-9.\n'
%%
# source: vercel-labs/just-bash packages/just-bash/src/agent-examples/text-processing-workflows.test.ts (should remove potential XSS characters)
# workdir: tr-sanitize/data
grep script user-input.txt | tr -d '<>'
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg -n "BUG|FIXME|TODO|XXX|HACK" -S | head -n 200
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg --files | head -n 50
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg -n "navigate-to-route" -S
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
grep -R CODEX_SANDBOX_ENV_VAR -n .
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: core/src/spawn.rs for the original's path
# order: unspecified
grep -R CODEX_SANDBOX_ENV_VAR -n core/src/spawn.rs
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
# order: unspecified
egrep -R TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
fgrep -l TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
grep -l TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core/src/*.rs
grep --files-with-matches TODO core/src/*.rs
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core/src/*.rs
grep -L TODO core/src/*.rs
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
grep -R src/main.rs -n .
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: codex-rs → core
# order: unspecified
cd core && rg --files
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: cd /Users/… && dropped; codex-rs → core
# order: unspecified
rg -n "codex_api" core -S | head -n 50
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
# order: unspecified
rg -l TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
# order: unspecified
rg --files-with-matches TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# adapted: src → core
# order: unspecified
rg --files-without-match TODO core
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
yes | rg --files
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
true && rg --files
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg --files || true
%%
# source: openai/codex codex-rs/shell-command/src/parse_command.rs (tests)
# workdir: repo
# order: unspecified
rg -n 'foo bar' -S
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (max_count)
# workdir: scratch
printf "a\na\na\na\n" | grep -m 2 a
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (context_both)
# workdir: scratch
printf "a\nb\nc\nd\ne\n" | grep -C 1 c
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (multiple_patterns_with_e)
# workdir: scratch
printf "apple\nbanana\ncherry\n" | grep -e apple -e cherry
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (quiet_mode_no_match)
# workdir: scratch
printf "hello\n" | grep -q xyz; echo $?
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (word_match)
# workdir: scratch
printf "cat\ncatch\nthe cat\n" | grep -w cat
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/flags.toml (only_matching)
# workdir: scratch
printf "foobar\n" | grep -o "foo"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/regex.toml (extended_regex_groups)
# workdir: scratch
printf "foobar\nfoobaz\nfoo\n" | grep -E "foo(bar|baz)"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/spec/grep/regex.toml (negated_character_class)
# workdir: scratch
printf "cat\nbat\nhat\ndog\n" | grep "[^ch]at"
%%
# source: rust-bash 0.3.0 (crates.io) tests/fixtures/comparison/set_options/basic.toml (set_a_allexport)
# workdir: scratch
set -a
MY_VAR=exported
env | grep MY_VAR
