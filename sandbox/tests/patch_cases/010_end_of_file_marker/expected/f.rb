x = 1
end
x = 2
end
