cat <<EOF
home is $X and $((1+2))
EOF
