tr a-z A-Z < README.md
