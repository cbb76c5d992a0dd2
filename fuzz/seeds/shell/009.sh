sed -E 's/([a-z]+)\.js/\1.ts/' <<< 'app.js util.js'
