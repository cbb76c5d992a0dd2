x = 1
end
x = 1
end
