echo "quoted   spaces" 'single $HOME' \$escaped
