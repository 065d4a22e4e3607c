require('typescript'); console.log('ok')
