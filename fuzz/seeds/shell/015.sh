cat <<'EOF'
home is $HOME
EOF
