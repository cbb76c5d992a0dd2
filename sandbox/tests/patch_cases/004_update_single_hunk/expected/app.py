def greet(name):
    print('hi', name)


def main():
    greet('world')
    return 0
